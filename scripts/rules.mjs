// `node scripts/rules.mjs`: writes js/rules.js, the rules the JS side reads from the crate (error
// codes and which are final, status classes, default settings, the tab layer's error texts), from
// the JSON that scripts/rules.rs prints. `--check` writes nothing and fails when the file differs.
// `npm run build` runs it first; tests/rules-drift.test.mjs checks the file and every copy.
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { StepError, cli, isMain, root, run } from "./exec.mjs";

export const RULES_FILE = "js/rules.js";

/** The crate's table: `cargo run --example rules` (native, stable). */
export async function crateRules() {
  const out = await run("rules", "cargo", ["run", "--quiet", "--example", "rules"], { capture: true });
  try {
    return JSON.parse(out);
  } catch (err) {
    throw new StepError("rules", `scripts/rules.rs printed no JSON: ${err.message}`);
  }
}

const json = (value) => JSON.stringify(value, null, 2);

/**
 * `value` as a JS literal frozen at every level. `/* @__PURE__ *\/` on each freeze: a bundle keeps
 * only the tables its code reads (a page's entry reads the error codes, nothing else).
 */
function frozen(value, indent = "") {
  if (value === null || typeof value !== "object") return JSON.stringify(value);
  const inner = `${indent}  `;
  const items = Array.isArray(value)
    ? value.map((item) => `${inner}${frozen(item, inner)}`)
    : Object.entries(value).map(([key, item]) => `${inner}${JSON.stringify(key)}: ${frozen(item, inner)}`);
  const [open, close] = Array.isArray(value) ? ["[", "]"] : ["{", "}"];
  return `/* @__PURE__ */ Object.freeze(${open}\n${items.join(",\n")}\n${indent}${close})`;
}

const table = (doc, name, value) => `/** ${doc} */\nexport const ${name} = ${frozen(value)};\n`;

/** The text of js/rules.js for `rules` (what scripts/rules.rs prints). */
export function rulesModule(rules) {
  const { poller, step } = rules.defaults;
  return `// Generated from the crate by \`node scripts/rules.mjs\` (scripts/rules.rs): do not edit, change the
// rule in Rust and run it again. tests/rules-drift.test.mjs fails when this file, or a copy of one
// of its values elsewhere in the repository, differs from the crate.

${table("Every `error.code`, in a stable order.", "ERROR_CODES", rules.errorCodes)}
${table("The codes that polling again with the same options cannot change.", "FINAL_ERROR_CODES", rules.finalErrorCodes)}
${table("The class of each documented v3 run status (any other status is `\"" + rules.v3.otherwise + "\"`).", "RUN_STATUS_CLASSES", rules.v3.statuses)}
/** The words that mark a run's \`error_message\` as All Inputs Failed, in any case. */
export const ALL_INPUTS_FAILED_TEXT = ${json(rules.allInputsFailedText)};

${table("Each documented v4 run status: its class, the v3 status a reader is shown, the final error of a failure.", "V4_STATUSES", rules.v4.statuses)}
${table("A poller's default options (`JobPoller`; `null`: none).", "DEFAULTS", poller)}
${table("A step's defaults (`pollStep`): its request and time budgets.", "STEP_DEFAULTS", step)}
${Object.entries(rules.messages).map(([code, text]) => `/** The engine's ${code} message${text.includes("{") ? ", \`{name}\` standing for a value" : ""}. */\nexport const ${code}_TEXT = ${json(text)};\n`).join("\n")}
/** The class of a v3 run status, in any case: active, paused, succeeded or failed. */
export function classifyStatus(status) {
  const word = String(status ?? "").toLowerCase();
  return Object.hasOwn(RUN_STATUS_CLASSES, word) ? RUN_STATUS_CLASSES[word] : ${json(rules.v3.otherwise)};
}

/** True when \`message\` says All Inputs Failed (any case): no retry can help. */
export const isAllInputsFailed = (message) => String(message ?? "").toLowerCase().includes(ALL_INPUTS_FAILED_TEXT);

/** \`text\` (one of the \`*_TEXT\` messages) with its \`{name}\`s filled from \`values\`. */
export const fillText = (text, values) => text.replace(/\\{(\\w+)\\}/g, (_, name) => String(values[name]));
`;
}

export async function writeRules({ check = false } = {}) {
  const text = rulesModule(await crateRules());
  const file = path.join(root, RULES_FILE);
  if (!check) return writeFileSync(file, text);
  if (readFileSync(file, "utf8") !== text) throw new StepError("rules", `${RULES_FILE} is not what the crate says: run node scripts/rules.mjs`);
}

if (isMain(import.meta.url)) cli(() => writeRules({ check: process.argv.includes("--check") }));
