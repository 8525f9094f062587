// OSCC book: tables that fit the text column (see oscc.css). Runs once per page.
//
// 1. Words of 12 or more characters with "_" or "." in table cells (claim ids, arm
//    names such as continuation_only) get break points after "_" and after a "."
//    that precedes a letter, never inside a number.
// 2. The "claim id" column is marked (class oscc-claim-id: small grey monospace) and
//    every id gets a tooltip with its full text.
// 3. When a table with a claim-id column is still wider than the text column, the
//    ids move under the row labels (a second line in small grey monospace) and the
//    claim-id column is hidden: every id stays visible and searchable, and the table
//    loses a column instead of being cut at the right edge.
(function () {
  "use strict";
  var ID_HEADER = /^claim[ _-]?ids?$/i;
  var LONG_WORD = /[^\s]{12,}/;
  var BREAKS = /(?<=_)|(?<=\.)(?=[A-Za-z])/;

  function columnOf(table, pattern) {
    var row = table.tHead && table.tHead.rows[0];
    if (!row) return -1;
    for (var i = 0; i < row.cells.length; i++) {
      if (pattern.test(row.cells[i].textContent.trim())) return i;
    }
    return -1;
  }

  function breakable(cell) {
    var text = cell.textContent;
    if (!text || cell.children.length) return;
    var parts = text.split(BREAKS);
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

  // Move each row's claim id under its label and hide the claim-id column.
  function idsUnderLabels(table, idCol) {
    var labelCol = columnOf(table, /^quantity$/i);
    if (labelCol < 0) labelCol = 0;
    if (labelCol === idCol) return;
    var width = table.rows[0].cells.length;
    var rows = Array.prototype.slice.call(table.rows);
    if (rows.some(function (row) { return row.cells.length !== width; })) return;  // spans: leave as is
    rows.forEach(function (row) {
      var id = row.cells[idCol], label = row.cells[labelCol];
      id.classList.add("oscc-hidden");
      var text = id.textContent.trim();
      if (!text) return;
      var below = document.createElement("span");
      below.className = "oscc-claim-id oscc-claim-id-below";
      if (row.parentNode.tagName === "THEAD") {
        if (row !== table.tHead.rows[0]) return;
        below.textContent = text;  // the header says what the grey line is
      } else {
        below.title = text;
        while (id.firstChild) below.appendChild(id.firstChild);
      }
      label.appendChild(below);
    });
  }

  function fit(table) {
    if (table.dataset.osccFit) return;
    table.dataset.osccFit = "1";
    var idCol = columnOf(table, ID_HEADER);
    Array.prototype.forEach.call(table.rows, function (row) {
      var body = row.parentNode.tagName !== "THEAD";
      Array.prototype.forEach.call(row.cells, function (cell, k) {
        if (k === idCol) {
          cell.classList.add("oscc-claim-id");
          if (body) {
            cell.title = cell.textContent.trim();
            breakable(cell);
          }
        } else if (body && LONG_WORD.test(cell.textContent) && /_|\.[A-Za-z]/.test(cell.textContent)) {
          breakable(cell);
        }
      });
    });
    if (idCol >= 0 && tooWide(table)) idsUnderLabels(table, idCol);
  }

  function run() {
    document.querySelectorAll(".bd-article table").forEach(fit);
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", run);
  else run();
})();
