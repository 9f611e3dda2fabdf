// Click a column's header to sort a table by it (again: the other way); rows of the footer stay
// below. Cells sort by their leading number ("87.2 ± 1.3" by 87.2), else by their text; empty
// cells and dashes come last either way. The other parts of a table cut into parts
// (.table-parts) take the same order of rows (by their first cell).
(function () {
  function value(cell) {
    var text = cell ? cell.textContent.trim().replace(/\u2212/g, "-") : "";
    if (text === "" || text === "\u2013" || text === "-") { return null; }
    var number = text.match(/^[-+]?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?/i);
    return number ? parseFloat(number[0]) : text.toLowerCase();
  }
  function compare(a, b) {
    if (typeof a === typeof b) { return a < b ? -1 : (a > b ? 1 : 0); }
    return typeof a === "number" ? -1 : 1;
  }
  function sortBy(table, th, column) {
    var body = table.tBodies[0];
    var ascending = th.getAttribute("aria-sort") !== "ascending";
    var rows = Array.prototype.slice.call(body.rows).map(function (row) {
      return { row: row, key: value(row.cells[column]) };
    });
    rows.sort(function (a, b) {
      if (a.key === null || b.key === null) { return (a.key === null) - (b.key === null); }
      return ascending ? compare(a.key, b.key) : compare(b.key, a.key);
    });
    rows.forEach(function (r) { body.appendChild(r.row); });
    Array.prototype.forEach.call(th.parentNode.cells, function (h) { h.removeAttribute("aria-sort"); });
    th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
    var parts = table.closest(".table-parts");
    if (parts) {
      var order = rows.map(function (r) { return r.row.cells[0].textContent; });
      parts.querySelectorAll("table").forEach(function (other) {
        if (other === table) { return; }
        var byLabel = {};
        Array.prototype.forEach.call(other.tBodies[0].rows, function (row) {
          byLabel[row.cells[0].textContent] = row; });
        order.forEach(function (label) {
          if (byLabel[label]) { other.tBodies[0].appendChild(byLabel[label]); } });
        Array.prototype.forEach.call(other.tHead.rows[0].cells, function (h) {
          h.removeAttribute("aria-sort"); });
      });
    }
  }
  document.querySelectorAll("table.sortable").forEach(function (table) {
    if (!table.tHead || !table.tBodies.length) { return; }
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, column) {
      th.title = "sort by this column";
      th.addEventListener("click", function () { sortBy(table, th, column); });
    });
  });
})();
