// README examples are code: every fenced block of README.md and worker/README.md is either a
// file under examples/ included between markers, one text, never two:
//
//   <!-- example: examples/node/watch.js -->
//   ```js
//   …the file's exact contents…
//   ```
//   <!-- /example -->
//
// or a block marked as not something to copy and run, with the reason (output, a config
// fragment, a command that needs an account):
//
//   <!-- not-example: what the block is -->
//   ```sh
//   …
//   ```
//
// `node scripts/examples.mjs --write` rewrites the included blocks from the files;
// `node scripts/examples.mjs` (or `--check`) fails on a block that differs from its file, on a
// marker naming a missing file, and on a fenced block with neither marker. Each example file is
// type-checked and run by tests/examples/.
import { existsSync, readFileSync, readdirSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { StepError, cli, isMain, root } from "./exec.mjs";

/** The markdown files whose code blocks are examples. */
export const MARKDOWN_FILES = ["README.md", path.join("worker", "README.md")];
export const EXAMPLES_DIR = "examples";

/** The fence language of an example file, from its name (other names keep the block's own, e.g. `ini`). */
const LANGUAGES = { js: "js", mjs: "js", ts: "ts", tsx: "tsx", jsx: "jsx", vue: "vue", svelte: "svelte", html: "html", sh: "sh", toml: "toml", json: "json", jsonc: "jsonc" };

/**
 * Both READMEs ship in the npm package (README.md is its page there), where a relative link
 * leads nowhere: links to the repository's files are absolute (`/blob/main/<path>`, images
 * `/raw/main/<path>`), resolved from the folder of the markdown file that holds them. The
 * repository is package.json's, read from there (one source).
 */
export const REPOSITORY_URL = repositoryUrl(JSON.parse(readFileSync(path.join(root, "package.json"), "utf8")));
export const ABSOLUTE_LINKS_IN = MARKDOWN_FILES;

/** The web address of package.json's `repository` (`git+https://…/x.git` → `https://…/x`). */
export function repositoryUrl(pkg) {
  const url = typeof pkg.repository === "string" ? pkg.repository : pkg.repository?.url;
  if (typeof url !== "string") throw new StepError("examples", "package.json has no repository.url: README links cannot be made absolute");
  return url.replace(/^git\+/, "").replace(/\.git$/, "");
}
const LINK = /(!?)\[([^\]]*)\]\(([^)\s]+)\)/g;

const EXAMPLE_OPEN = /^<!-- example: (\S+) -->$/;
const EXAMPLE_CLOSE = "<!-- /example -->";
const NOT_EXAMPLE = /^<!-- not-example: (.*\S.*) -->$/;
const FENCE = /^(`{3,}|~{3,})(.*)$/;

/**
 * The fence language for `file`: from its extension, else `fallback` (the block's own language,
 * for names such as `.dev.vars.example`); throws when there is neither.
 */
export function languageOf(file, fallback = "") {
  const ext = path.extname(file).slice(1);
  const lang = LANGUAGES[ext] ?? fallback;
  if (!lang) throw new Error(`${file}: no fence language for .${ext} (known: ${Object.keys(LANGUAGES).join(", ")}); give its block one`);
  return lang;
}

/** A fence longer than any run of backticks in `text`, so the block cannot end early. */
function fenceFor(text) {
  const longest = Math.max(2, ...[...text.matchAll(/`{3,}/g)].map((m) => m[0].length));
  return "`".repeat(longest + 1);
}

/** The markdown block of `file` with `contents`, markers included (`lang` for names without a known extension). */
export function renderBlock(file, contents, lang = "") {
  const body = contents.endsWith("\n") ? contents : `${contents}\n`;
  const fence = fenceFor(body);
  return [`<!-- example: ${file} -->`, `${fence}${languageOf(file, lang)}`, `${body}${fence}`, EXAMPLE_CLOSE].join("\n");
}

/**
 * Reads a markdown text into its code blocks: `{ kind: "example", file, contents, start, end }`
 * (lines `start`..`end` are the markers and the block), `{ kind: "not-example", reason, line }`,
 * `{ kind: "unmarked", line, info }`, and `{ kind: "broken", line, message }` for markers
 * that do not frame exactly one fenced block.
 */
export function parseBlocks(markdown) {
  const lines = markdown.split("\n");
  const blocks = [];
  let i = 0;
  /** The fenced block opening at line `at`: `{ info, body, close }` (close = index of its closing fence), or null. */
  const fencedAt = (at) => {
    const open = FENCE.exec(lines[at] ?? "");
    if (!open) return null;
    const [, fence, info] = open;
    for (let j = at + 1; j < lines.length; j++) {
      const closing = lines[j].trim();
      if (closing.length >= fence.length && closing === fence[0].repeat(closing.length)) {
        return { info: info.trim(), body: lines.slice(at + 1, j).join("\n"), close: j };
      }
    }
    return { info: info.trim(), body: lines.slice(at + 1).join("\n"), close: lines.length - 1, unclosed: true };
  };
  while (i < lines.length) {
    const line = lines[i];
    const example = EXAMPLE_OPEN.exec(line);
    const notExample = NOT_EXAMPLE.exec(line);
    if (example) {
      const block = fencedAt(i + 1);
      if (!block || block.unclosed || lines[block.close + 1] !== EXAMPLE_CLOSE) {
        blocks.push({ kind: "broken", line: i + 1, message: `${line} must be followed by one fenced block and ${EXAMPLE_CLOSE}` });
        i += 1;
        continue;
      }
      blocks.push({ kind: "example", file: example[1], info: block.info, contents: `${block.body}\n`, start: i, end: block.close + 1, line: i + 1 });
      i = block.close + 2;
    } else if (notExample) {
      const block = fencedAt(i + 1);
      if (!block) {
        blocks.push({ kind: "broken", line: i + 1, message: `${line} must be followed by a fenced block` });
        i += 1;
        continue;
      }
      blocks.push({ kind: "not-example", reason: notExample[1].trim(), info: block.info, line: i + 1 });
      i = block.close + 1;
    } else if (FENCE.test(line)) {
      const block = fencedAt(i);
      blocks.push({ kind: "unmarked", info: block.info, line: i + 1 });
      i = block.close + 1;
    } else {
      if (line === EXAMPLE_CLOSE) blocks.push({ kind: "broken", line: i + 1, message: `${EXAMPLE_CLOSE} without an opening example marker` });
      i += 1;
    }
  }
  return blocks;
}

const read = (file) => readFileSync(path.join(root, file), "utf8");

/**
 * The absolute URL of a relative link `target` in `markdown` (a path from the root), or null
 * when it is not relative.
 */
export function absoluteLink(markdown, target, image) {
  if (/^([a-z][a-z0-9+.-]*:|#|\/\/)/i.test(target)) return null;
  const [file, fragment] = target.split("#");
  const kind = image ? "raw" : file.endsWith("/") ? "tree" : "blob";
  const fromRoot = path.posix.normalize(path.posix.join(path.posix.dirname(markdown.split(path.sep).join("/")), file)).replace(/\/$/, "");
  return `${REPOSITORY_URL}/${kind}/main/${fromRoot}${fragment === undefined ? "" : `#${fragment}`}`;
}

/** Applies `change(line, lineIndex)` to the lines of `markdown` outside fenced blocks. */
function mapProse(markdown, change) {
  let fence = null;
  return markdown
    .split("\n")
    .map((line, i) => {
      const open = FENCE.exec(line);
      if (fence === null && open) fence = open[1];
      else if (fence !== null && line.trim().startsWith(fence) && line.trim() === fence[0].repeat(line.trim().length)) fence = null;
      else if (fence === null) return change(line, i);
      return line;
    })
    .join("\n");
}

/** Relative links of the markdown file `markdown` whose text is `text`, `{ line, target, url }` each. */
function relativeLinks(markdown, text) {
  const found = [];
  mapProse(text, (line, i) => {
    for (const [, image, , target] of line.matchAll(LINK)) {
      const url = absoluteLink(markdown, target, image === "!");
      if (url !== null) found.push({ line: i + 1, target, url });
    }
    return line;
  });
  return found;
}

/** Every example file under examples/, relative to the root, sorted. */
export function exampleFiles(dir = EXAMPLES_DIR) {
  const abs = path.join(root, dir);
  if (!existsSync(abs)) return [];
  return readdirSync(abs)
    .flatMap((name) => {
      const rel = path.join(dir, name);
      return statSync(path.join(root, rel)).isDirectory() ? exampleFiles(rel) : [rel];
    })
    .sort();
}

/** The example blocks of every markdown file: `{ markdown, file, line, contents }`. */
export function includedExamples(readMarkdown = read) {
  return MARKDOWN_FILES.flatMap((markdown) =>
    parseBlocks(readMarkdown(markdown))
      .filter((b) => b.kind === "example")
      .map((b) => ({ markdown, file: b.file, line: b.line, contents: b.contents, info: b.info })),
  );
}

/**
 * What is wrong with the READMEs' blocks, one line each (empty: in sync). `readMarkdown` reads a
 * README by its path (the tests pass altered texts).
 */
export function problems(readMarkdown = read) {
  const found = [];
  for (const markdown of MARKDOWN_FILES) {
    for (const block of parseBlocks(readMarkdown(markdown))) {
      const at = `${markdown}:${block.line}`;
      if (block.kind === "broken") found.push(`${at}: ${block.message}`);
      else if (block.kind === "unmarked") {
        found.push(`${at}: a \`\`\`${block.info} block that is not an example: put it in a file under examples/ between <!-- example: examples/… --> and <!-- /example --> (then --write), or mark it <!-- not-example: reason --> if it is output or a fragment no one runs`);
      } else if (block.kind === "example") {
        if (!block.file.startsWith(`${EXAMPLES_DIR}/`)) found.push(`${at}: ${block.file} is not under ${EXAMPLES_DIR}/`);
        else if (!existsSync(path.join(root, block.file))) found.push(`${at}: ${block.file} does not exist`);
        else {
          if (read(block.file) !== block.contents) found.push(`${at}: the block differs from ${block.file} (node scripts/examples.mjs --write)`);
          let lang = null;
          try {
            lang = languageOf(block.file, block.info);
          } catch (e) {
            found.push(`${at}: ${e.message}`);
          }
          if (lang !== null && block.info !== lang) found.push(`${at}: the block's language is "${block.info}", ${block.file} is ${lang} (--write fixes it)`);
        }
      }
    }
  }
  for (const markdown of ABSOLUTE_LINKS_IN) {
    for (const { line, target, url } of relativeLinks(markdown, readMarkdown(markdown))) {
      found.push(`${markdown}:${line}: the link ${target} is relative: on npm it leads nowhere (--write makes it ${url})`);
    }
  }
  const included = new Set(includedExamples(readMarkdown).map((e) => e.file));
  for (const file of exampleFiles()) {
    // Files a README does not show are the examples' own setup; they say so by name (`_…`,
    // `.…`, a package.json or tsconfig of an example project).
    const name = path.basename(file);
    const support = /^[_.]/.test(name) || name === "package.json" || /^tsconfig.*\.json$/.test(name);
    if (!included.has(file.split(path.sep).join("/")) && !support) found.push(`${file}: in no README (include it, or name it _… if it only supports other examples)`);
  }
  return found;
}

/** Rewrites every example block from its file; returns the markdown files changed. */
export function write() {
  const changed = [];
  for (const markdown of MARKDOWN_FILES) {
    const text = read(markdown);
    const lines = text.split("\n");
    const blocks = parseBlocks(text).filter((b) => b.kind === "example");
    for (const block of blocks.reverse()) {
      if (!existsSync(path.join(root, block.file))) throw new StepError("examples", `${markdown}:${block.line}: ${block.file} does not exist`);
      lines.splice(block.start, block.end - block.start + 1, ...renderBlock(block.file, read(block.file), block.info).split("\n"));
    }
    let next = lines.join("\n");
    if (ABSOLUTE_LINKS_IN.includes(markdown)) {
      next = mapProse(next, (line) => line.replace(LINK, (all, image, label, target) => {
        const url = absoluteLink(markdown, target, image === "!");
        return url === null ? all : `${image}[${label}](${url})`;
      }));
    }
    if (next !== text) {
      writeFileSync(path.join(root, markdown), next);
      changed.push(markdown);
    }
  }
  return changed;
}

/** `--check` (the default): throws a StepError listing every problem. */
export function check() {
  const found = problems();
  if (found.length > 0) throw new StepError("examples", `README blocks out of sync with examples/:\n  ${found.join("\n  ")}`);
  console.log(`examples: ${includedExamples().length} blocks in sync with ${exampleFiles().length} files under examples/`);
}

if (isMain(import.meta.url)) {
  cli(async () => {
    const args = process.argv.slice(2);
    const unknown = args.filter((a) => !["--write", "--check"].includes(a));
    if (unknown.length > 0) throw new StepError("examples", `unknown argument ${unknown.join(" ")}; usage: node scripts/examples.mjs [--write | --check]`);
    if (args.includes("--write")) {
      const changed = write();
      console.log(changed.length === 0 ? "examples: README blocks already match examples/" : `examples: rewrote ${changed.join(", ")}`);
    }
    check();
  });
}
