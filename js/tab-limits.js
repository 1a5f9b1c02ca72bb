// What a tab keeps for the others, shared by the protocol (js/tab-protocol.js) and the tab
// that polls a run alone until another tab joins (js/tabs.js), which must not load the protocol.

/** Rows a tab keeps after delivering them, to answer a tab that joins late. */
export const LOG_ROWS = 1000;
/** Undelivered rows a tab accepts from the channel; beyond, it reads them later itself. */
export const MAX_AHEAD = 2000;
