// The options of the tab layer (js/tabs.js), checked by every runtime's JobPoller: where tabs
// cannot share (Node, workerd, Web Workers without Web Locks) they change nothing, and a wrong
// one is still the TypeError it is in a page.

import { read } from "./options.js";

const TAB_OPTIONS = [
  ["shareAcrossTabs", "boolean"],
  ["onRoleChange", "function"],
  ["shareKey", "string"],
];

/** Throws the TypeError naming `shareAcrossTabs`, `onRoleChange` or `shareKey` when one is of the wrong type. */
export function checkTabOptions(options) {
  read(options, TAB_OPTIONS);
}
