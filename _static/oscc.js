// OSCC book: tables that fit the text column (see oscc.css), applied to every table of a page.
//
// 1. Words of 12 or more characters with "_" or "." in table cells (claim ids, arm
//    names such as continuation_only) get break points (<wbr>) after "_" and after a
//    "." that precedes a letter, never inside a number. oscc.css lets a claim id break
//    only there: an id wraps at its dots and underscores, never one character per line.
//    A count out of a total ("100000/100000") may break after its slash. A table whose
//    row labels are all short is marked oscc-short-labels (no minimum width for them).
// 2. The "claim id" column is marked (class oscc-claim-id: small grey monospace, a
//    minimum width) and every id gets a tooltip with its full text.
// 3. When a comparison table (the claim id after the row label) is wider than the text
//    column, or its ids would wrap to more than MAX_ID_LINES lines in their column, each
//    id moves onto its own line below its row, starting under the row label and running
//    the width of the row (one line for any id of up to ~90 characters); the claim-id
//    column is hidden and the label's header gets a grey "claim id" under it. Every id
//    stays visible and searchable, and the other columns get the id column's width.
//    A table keyed by its claim id (the id is the first column, as in the ledger) keeps
//    its id column, a wider one (class oscc-claim-key): the id is the row label there.
// A table that is not laid out yet (inside a collapsed section: a <details> element,
// a toggled admonition) is fitted when it first gets a size, and a comparison table that
// keeps its id column is fitted again when its size changes (ResizeObserver: a section
// that opens, fonts or MathJax that arrive later), so a reader sees the same layout
// everywhere.
(function () {
  "use strict";
  var ID_HEADER = /^claim[ _-]?ids?$/i;
  var LONG_WORD = /[^\s]{12,}/;
  var BREAKS = /(?<=_)|(?<=\.)(?=[A-Za-z])/;
  var MAX_ID_LINES = 2;
  var NO_ID = /^(?:[—–-]|nan|none)?$/i;
  // A count out of a total ("100000/100000"): it may break after the slash.
  var FRACTION = /^\d[\d,]*\/\d[\d,]*$/;
  var AFTER_SLASH = /(?<=\/)/;
  // Row labels no longer than this many characters ("01_contract", "lag 0.1") need no minimum
  // width (oscc.css keeps a long quantity label from being squeezed): their table gets
  // oscc-short-labels and gives the numbers the room.
  var SHORT_LABEL = 24;

  function columnOf(table, pattern) {
    var row = table.tHead && table.tHead.rows[0];
    if (!row) return -1;
    for (var i = 0; i < row.cells.length; i++) {
      if (pattern.test(row.cells[i].textContent.trim())) return i;
    }
    return -1;
  }

  function breakable(cell, at) {
    var text = cell.textContent;
    if (!text || cell.children.length) return;
    var parts = text.split(at || BREAKS);
    if (parts.length < 2) return;
    cell.textContent = "";
    parts.forEach(function (part, k) {
      if (k > 0) cell.appendChild(document.createElement("wbr"));
      cell.appendChild(document.createTextNode(part));
    });
  }

  function tooWide(table) {
    var box = table.parentElement;
    return box && table.offsetWidth > box.clientWidth + 1;
  }

  function lineHeight(el) {
    var style = getComputedStyle(el);
    var lh = parseFloat(style.lineHeight);
    return isNaN(lh) ? 1.2 * parseFloat(style.fontSize) : lh;
  }

  // Do the ids wrap to more than MAX_ID_LINES lines in their column?
  function idsTall(table, idCol) {
    var range = document.createRange();
    return Array.prototype.some.call(table.tBodies, function (body) {
      return Array.prototype.some.call(body.rows, function (row) {
        var cell = row.cells[idCol];
        if (!cell || !cell.textContent.trim()) return false;
        range.selectNodeContents(cell);
        return range.getBoundingClientRect().height > (MAX_ID_LINES + 0.5) * lineHeight(cell);
      });
    });
  }

  // Move each row's claim id onto a line of its own below the row (from the row label to
  // the right edge) and hide the claim-id column.
  function idsOnOwnLines(table, idCol) {
    var labelCol = columnOf(table, /^quantity$/i);
    if (labelCol < 0) labelCol = 0;
    if (labelCol === idCol) return;
    var width = table.rows[0].cells.length;
    var rows = Array.prototype.slice.call(table.rows);
    if (rows.some(function (row) {  // spans (a MultiIndex): leave the table as it is
      return row.cells.length !== width || Array.prototype.some.call(row.cells, function (c) {
        return c.colSpan !== 1 || c.rowSpan !== 1;
      });
    })) return;
    var shown = width - 1, pad = labelCol > idCol ? labelCol - 1 : labelCol;
    table.classList.add("oscc-id-lines");
    var band = 0;
    rows.forEach(function (row) {
      var id = row.cells[idCol], label = row.cells[labelCol];
      id.classList.add("oscc-hidden");
      if (row.parentNode.tagName === "THEAD") {
        // the header says what the grey lines are: "claim id" under the row label's header
        // (pandas puts the index name, "quantity", in the last header row)
        var heads = table.tHead.rows, last = heads[heads.length - 1];
        var name = heads[0].cells[idCol].textContent.trim();
        if (row !== last || !name) return;
        var legend = document.createElement("span");
        legend.className = "oscc-claim-id oscc-claim-id-below";
        legend.textContent = name;
        label.appendChild(legend);
        return;
      }
      band = 1 - band;
      row.classList.add(band ? "oscc-band-a" : "oscc-band-b");
      var text = id.textContent.trim();
      if (NO_ID.test(text)) return;  // no claim id ("—"): no line
      var line = document.createElement("tr");
      line.className = "oscc-id-line " + (band ? "oscc-band-a" : "oscc-band-b");
      if (pad > 0) {
        var before = document.createElement("td");
        before.colSpan = pad;
        before.className = "oscc-id-pad";
        line.appendChild(before);
      }
      var cell = document.createElement("td");
      cell.colSpan = shown - pad;
      cell.className = "oscc-claim-id oscc-claim-id-line";
      cell.title = text;
      while (id.firstChild) cell.appendChild(id.firstChild);
      id.textContent = text;  // the hidden cell keeps its text (the table is still a comparison table)
      line.appendChild(cell);
      row.classList.add("oscc-has-id-line");
      row.parentNode.insertBefore(line, row.nextSibling);
    });
  }

  function shortLabels(table) {
    var labels = table.querySelectorAll("tbody th");
    return labels.length > 0 && Array.prototype.every.call(labels, function (th) {
      return th.textContent.trim().length <= SHORT_LABEL;
    });
  }

  function mark(table, idCol) {
    if (shortLabels(table)) table.classList.add("oscc-short-labels");
    Array.prototype.forEach.call(table.rows, function (row) {
      var body = row.parentNode.tagName !== "THEAD";
      Array.prototype.forEach.call(row.cells, function (cell, k) {
        if (k === idCol) {
          cell.classList.add("oscc-claim-id");
          if (idCol === 0) cell.classList.add("oscc-claim-key");
          if (body) {
            cell.title = cell.textContent.trim();
            breakable(cell);
          }
        } else if (body && LONG_WORD.test(cell.textContent) && /_|\.[A-Za-z]/.test(cell.textContent)) {
          breakable(cell);
        } else if (body && FRACTION.test(cell.textContent.trim())) {
          breakable(cell, AFTER_SLASH);
        }
      });
    });
  }

  // Mark a table once it is laid out; move its ids onto their own lines when it is too wide
  // or they wrap. Until then, watch its size: a collapsed section that opens, fonts or
  // MathJax arriving later can change the answer.
  function fit(table) {
    if (!table.offsetWidth) { watch(table); return; }  // collapsed: fit it when it shows
    var idCol = columnOf(table, ID_HEADER);
    if (!table.dataset.osccFit) {
      table.dataset.osccFit = "1";
      mark(table, idCol);
    }
    if (idCol > 0 && !table.classList.contains("oscc-id-lines") && (tooWide(table) || idsTall(table, idCol))) {
      idsOnOwnLines(table, idCol);
    }
    if (idCol > 0 && !table.classList.contains("oscc-id-lines")) watch(table);
    else if (observer) observer.unobserve(table);
  }

  var observer = window.ResizeObserver && new ResizeObserver(function (entries) {
    entries.forEach(function (entry) {
      if (entry.target.offsetWidth) fit(entry.target);
    });
  });

  function watch(table) {
    if (observer) observer.observe(table);
  }

  function run() {
    document.querySelectorAll(".bd-article table").forEach(fit);
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", run);
  else run();
})();
