// The READMEs' code blocks and examples/: one text, never two (scripts/examples.mjs), and the
// check itself catches drift and unmarked blocks.
import assert from "node:assert/strict";
import { test } from "node:test";
import { readFileSync, readdirSync, statSync } from "node:fs";
import path from "node:path";
import { ABSOLUTE_LINKS_IN, REPOSITORY_URL, exampleFiles, parseBlocks, problems, renderBlock, repositoryUrl } from "../../scripts/examples.mjs";
import { root } from "../../scripts/exec.mjs";

const readme = (file) => readFileSync(path.join(root, file), "utf8");

test("every block of README.md and worker/README.md is its example file, or marked not-example", () => {
  assert.deepEqual(problems(), []);
});

test("the check sees a block that differs from its file, an unmarked block and broken markers", () => {
  const file = "examples/node/watch.js";
  const block = renderBlock(file, "const a = 1;\n");
  const [parsed] = parseBlocks(`text\n\n${block}\n\nmore`);
  assert.deepEqual({ kind: parsed.kind, file: parsed.file, info: parsed.info, contents: parsed.contents }, { kind: "example", file, info: "js", contents: "const a = 1;\n" });
  assert.deepEqual(parseBlocks("```js\nfetch(url);\n```\n").map((b) => b.kind), ["unmarked"]);
  assert.deepEqual(parseBlocks("<!-- not-example: output -->\n```text\nok\n```\n").map((b) => b.kind), ["not-example"]);
  assert.deepEqual(parseBlocks(`<!-- example: ${file} -->\n\`\`\`js\nx\n\`\`\`\n`).map((b) => b.kind), ["broken", "unmarked"], "no closing marker");
  assert.deepEqual(parseBlocks("<!-- not-example:  -->\n```sh\nls\n```\n").map((b) => b.kind), ["unmarked"], "a reason is required");
  // A block holding a fence of its own gets a longer fence, and reads back whole.
  const nested = renderBlock("examples/x.sh", "cat <<'EOF'\n```\nEOF\n");
  assert.equal(parseBlocks(nested)[0].contents, "cat <<'EOF'\n```\nEOF\n");
});

test("a README edited by hand, or a new unmarked block, fails the check and names the place", () => {
  const edited = (file) => (file === "README.md" ? readme(file).replace('appendFile("rows.ndjson"', 'appendFile("out.ndjson"') : readme(file));
  assert.ok(edited("README.md") !== readme("README.md"), "the edit applies");
  const baseline = new Set(problems());
  const added = (list) => list.filter((p) => !baseline.has(p)).map((p) => p.replace(/:\d+:/, ":N:"));
  assert.deepEqual(added(problems(edited)), ["README.md:N: the block differs from examples/node/watch.js (node scripts/examples.mjs --write)"]);
  const unmarked = (file) => (file === "README.md" ? `${readme(file)}\n\`\`\`js\nawait fetch(url);\n\`\`\`\n` : readme(file));
  const found = added(problems(unmarked));
  assert.equal(found.length, 1, found.join("\n"));
  assert.match(found[0], /^README\.md:N: a ```js block that is not an example/);
});

test("README.md's and worker/README.md's links are absolute (both ship on npm, without the repository); --write makes them so", () => {
  const baseline = new Set(problems());
  const relative = (file) => {
    if (file === "README.md") return `${readme(file)}\nSee [the size notes](docs/size.md#wasm) and ![a chart](bench/results/latest.svg).\n`;
    // worker/README.md's links are read from its own folder.
    return `${readme(file)}\nSee [the assumptions](../docs/api-assumptions.md) and [the worker's code](src/index.js).\n`;
  };
  const found = problems(relative).filter((p) => !baseline.has(p));
  assert.deepEqual(found.map((p) => p.replace(/:\d+:/, ":N:")), [
    "README.md:N: the link docs/size.md#wasm is relative: on npm it leads nowhere (--write makes it https://github.com/captaindata-poller/captaindata-poller/blob/main/docs/size.md#wasm)",
    "README.md:N: the link bench/results/latest.svg is relative: on npm it leads nowhere (--write makes it https://github.com/captaindata-poller/captaindata-poller/raw/main/bench/results/latest.svg)",
    "worker/README.md:N: the link ../docs/api-assumptions.md is relative: on npm it leads nowhere (--write makes it https://github.com/captaindata-poller/captaindata-poller/blob/main/docs/api-assumptions.md)",
    "worker/README.md:N: the link src/index.js is relative: on npm it leads nowhere (--write makes it https://github.com/captaindata-poller/captaindata-poller/blob/main/worker/src/index.js)",
  ]);
  for (const file of ["README.md", "worker/README.md"]) {
    assert.doesNotMatch(readme(file).replace(/```[\s\S]*?```/g, ""), /\]\((?!https?:|#)[^)]+\)/, `no relative link in ${file}`);
  }
});

test("every markdown file the npm package ships has absolute links", () => {
  const { files } = JSON.parse(readme("package.json"));
  // npm always ships README.md; `files` names the others.
  const shipped = ["README.md", ...files.filter((f) => f.endsWith(".md"))];
  assert.deepEqual(shipped.filter((f) => !ABSOLUTE_LINKS_IN.map((m) => m.split(path.sep).join("/")).includes(f)), []);
});

test("package.json names the repository, the homepage and where to file bugs (npm links them), the READMEs' links go to the same repository", () => {
  const pkg = JSON.parse(readme("package.json"));
  assert.equal(pkg.repository?.type, "git");
  assert.match(pkg.repository?.url ?? "", /^git\+https:\/\/github\.com\/[\w.-]+\/[\w.-]+\.git$/);
  const web = repositoryUrl(pkg);
  assert.equal(REPOSITORY_URL, web, "the READMEs' absolute links are built from package.json's repository");
  assert.ok(pkg.homepage?.startsWith(web), `homepage ${pkg.homepage} is the repository's`);
  const bugs = typeof pkg.bugs === "string" ? pkg.bugs : pkg.bugs?.url;
  assert.equal(bugs, `${web}/issues`);
});

test("every example file is named by a test that runs or checks it", () => {
  const tests = [];
  const collect = (dir) => {
    for (const name of readdirSync(path.join(root, dir))) {
      const rel = path.join(dir, name);
      if (statSync(path.join(root, rel)).isDirectory()) collect(rel);
      else if (/\.(test\.)?mjs$/.test(name)) tests.push(readFileSync(path.join(root, rel), "utf8"));
    }
  };
  collect("tests");
  // Named by its path, or by a folder of examples a test takes whole ("examples/worker").
  const names = (file) => {
    const parts = file.split(path.sep);
    return parts.slice(1).map((_, i) => parts.slice(0, parts.length - i).join("/"));
  };
  const untested = exampleFiles().filter((file) => !/(^|\/)[_.]/.test(file) && !tests.some((text) => names(file).some((name) => text.includes(name))));
  assert.deepEqual(untested, []);
});
