// The results table, windowed: every row is kept in one array indexed by its position in the
// run, and only the rows in view (plus a margin) are in the DOM. The table's top and bottom
// margins stand for the rows not drawn, so the scroller keeps its full height: the table holds
// data rows only (spacer <tr>s were rows too: two identical blank ones, read as a row shown
// twice by whatever counted the table's rows). A 50,000-row run costs the page the same few dozen
// <tr>s as a 50-row one, so rows arriving never stall it. Rows are placed by their position: a
// row whose position is already held is skipped, never repeated. A render keeps the <tr>s still
// in view and only adds or removes those at the window's edges: a batch arriving below the view
// changes the bottom margin, not 50 rows (rebuilding them made every batch's frame lay out and
// paint the whole window again).

const COLUMNS = [
  ["index", "#"],
  ["full_name", "Name"],
  ["job_title", "Title"],
  ["company_name", "Company"],
  ["location", "Location"],
];
/** Rows rendered above and below the visible ones, so a scroll shows no blank before a frame. */
const MARGIN_ROWS = 30;
/** Until a row is measured (the CSS gives rows this height). */
const DEFAULT_ROW_PX = 27;

const cellText = (value) => (value === null || value === undefined ? "" : typeof value === "object" ? JSON.stringify(value) : String(value));

function rowElement(row, index) {
  const tr = document.createElement("tr");
  if (row && typeof row === "object" && "id" in row) tr.dataset.id = String(row.id);
  // ARIA's pattern for a table showing part of its rows: the header is row 1.
  tr.setAttribute("aria-rowindex", String(index + 2));
  for (const [key] of COLUMNS) {
    const td = document.createElement("td");
    td.textContent = key === "index" ? String(index + 1) : cellText(row?.[key]);
    tr.append(td);
  }
  return tr;
}

/** Sets one of the table's margins when it changed (the top one stays put while rows arrive below the view). */
function setMargin(table, side, px) {
  const length = `${px}px`;
  if (table.style[side] !== length) table.style[side] = length;
}

function headerRow() {
  const head = document.createElement("tr");
  head.setAttribute("aria-rowindex", "1");
  for (const [, label] of COLUMNS) {
    const th = document.createElement("th");
    th.scope = "col";
    th.textContent = label;
    head.append(th);
  }
  return head;
}

/**
 * @param {HTMLElement} scroller the element that scrolls (holds the table)
 * @param {HTMLTableElement} table
 * @param {(received: number) => void} onRendered called after each render with the rows held
 */
export function createResultsTable(scroller, table, onRendered) {
  table.tHead.replaceChildren(headerRow());
  const tbody = table.tBodies[0];
  /** Every row received, by position. */
  let rows = [];
  let rowPx = DEFAULT_ROW_PX;
  let measured = false;
  let frame = 0;
  /** The positions of the rows drawn: `first…end`, end excluded. */
  let shown = { first: 0, end: 0 };

  /** The rows in view plus the margin, the table's margins the height of the rest. */
  function render() {
    frame = 0;
    const top = Math.max(0, scroller.scrollTop - table.tHead.offsetHeight);
    const first = Math.max(0, Math.floor(top / rowPx) - MARGIN_ROWS);
    const end = Math.min(rows.length, Math.ceil((top + scroller.clientHeight) / rowPx) + MARGIN_ROWS);
    showWindow(first, end);
    setMargin(table, "marginTop", first * rowPx);
    setMargin(table, "marginBottom", Math.max(0, rows.length - end) * rowPx);
    table.setAttribute("aria-rowcount", String(rows.length + 1));
    if (!measured && end > first) {
      measured = true;
      sizer.observe(tbody.rows[0], { box: "border-box" });
    }
    onRendered(rows.length);
  }

  // Fonts give rows another height than the default: place them by what the first row drawn
  // measures, once. A ResizeObserver reads it after the frame's layout; reading it in render()
  // forced a layout of its own into the first rows' frame, the longest of a run.
  const sizer = new ResizeObserver(([entry]) => {
    sizer.disconnect();
    const height = entry.borderBoxSize[0].blockSize;
    if (height > 0 && Math.abs(height - rowPx) > 0.5) {
      rowPx = height;
      schedule();
    }
  });

  /** Makes rows `first…end` the ones drawn, keeping those already drawn (a row never changes). */
  function showWindow(first, end) {
    if (end <= shown.first || first >= shown.end || shown.first === shown.end) {
      const fragment = document.createDocumentFragment();
      for (let i = first; i < end; i++) fragment.append(rowElement(rows[i], i));
      tbody.replaceChildren(fragment);
    } else {
      for (let i = shown.first; i < first; i++) tbody.firstChild.remove();
      for (let i = end; i < shown.end; i++) tbody.lastChild.remove();
      const before = document.createDocumentFragment();
      for (let i = first; i < shown.first; i++) before.append(rowElement(rows[i], i));
      tbody.prepend(before);
      const after = document.createDocumentFragment();
      for (let i = Math.max(first, shown.end); i < end; i++) after.append(rowElement(rows[i], i));
      tbody.append(after);
    }
    shown = { first, end };
  }

  function schedule() {
    frame ||= requestAnimationFrame(render);
  }

  scroller.addEventListener("scroll", schedule, { passive: true });

  return {
    /** Adds rows that start at position `offset` of the run; returns how many were new. */
    append(batch, offset) {
      const skip = Math.max(0, rows.length - offset);
      const fresh = batch.slice(skip);
      for (const row of fresh) rows.push(row);
      if (fresh.length > 0) schedule();
      return fresh.length;
    },
    clear() {
      if (frame) cancelAnimationFrame(frame);
      frame = 0;
      rows = [];
      shown = { first: 0, end: 0 };
      scroller.scrollTop = 0;
      render();
    },
    /** Every row held, in order (the page's download of the rows). */
    rows() {
      return rows;
    },
    get received() {
      return rows.length;
    },
  };
}
