// The results table. Rows are queued and appended in chunks, one chunk per animation frame,
// through a DocumentFragment, so 10,000 rows never block the page for long. Rows are placed by
// their position in the run: a row whose position is already shown is skipped, never repeated.

const CHUNK = 400;
const COLUMNS = [
  ["index", "#"],
  ["full_name", "Name"],
  ["job_title", "Title"],
  ["company_name", "Company"],
  ["location", "Location"],
];

const cellText = (value) => (value === null || value === undefined ? "" : typeof value === "object" ? JSON.stringify(value) : String(value));

function rowElement(row, index) {
  const tr = document.createElement("tr");
  if (row && typeof row === "object" && "id" in row) tr.dataset.id = String(row.id);
  for (const [key] of COLUMNS) {
    const td = document.createElement("td");
    td.textContent = key === "index" ? String(index + 1) : cellText(row?.[key]);
    tr.append(td);
  }
  return tr;
}

/**
 * @param {HTMLTableSectionElement} tbody
 * @param {HTMLTableSectionElement} thead
 * @param {(shown: number) => void} onRendered called after each chunk
 */
export function createResultsTable(thead, tbody, onRendered) {
  const head = document.createElement("tr");
  for (const [, label] of COLUMNS) {
    const th = document.createElement("th");
    th.scope = "col";
    th.textContent = label;
    head.append(th);
  }
  thead.replaceChildren(head);
  let received = 0; // rows accepted so far (queued or shown)
  let shown = 0;
  let queue = [];
  let frame = 0;

  function flush() {
    frame = 0;
    const chunk = queue.slice(0, CHUNK);
    queue = queue.slice(CHUNK);
    const fragment = document.createDocumentFragment();
    for (const { row, index } of chunk) fragment.append(rowElement(row, index));
    tbody.append(fragment);
    shown += chunk.length;
    onRendered(shown);
    if (queue.length > 0) frame = requestAnimationFrame(flush);
  }

  return {
    /** Adds rows that start at position `offset` of the run; returns how many were new. */
    append(rows, offset) {
      const skip = Math.max(0, received - offset);
      const fresh = rows.slice(skip);
      fresh.forEach((row, i) => queue.push({ row, index: received + i }));
      received += fresh.length;
      if (fresh.length > 0 && !frame) frame = requestAnimationFrame(flush);
      return fresh.length;
    },
    clear() {
      if (frame) cancelAnimationFrame(frame);
      frame = 0;
      queue = [];
      received = shown = 0;
      tbody.replaceChildren();
      onRendered(0);
    },
    get received() {
      return received;
    },
  };
}
