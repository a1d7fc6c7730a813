// forecast-reconcile run viewer: sorting, row details, question drill-down and filters.
// Plain DOM code, no library, no network. It never inserts HTML strings: drill-downs are cloned from
// <template> elements that the server rendered with every text escaped.
(function () {
  "use strict";
  var $$ = function (sel, root) { return Array.prototype.slice.call((root || document).querySelectorAll(sel)); };

  // --- sortable tables: <th data-key data-type="num"> sorts the table's <tbody class="item"> by data-<key>
  function sortTable(table, th) {
    var key = th.getAttribute("data-key");
    var num = th.getAttribute("data-type") === "num";
    var dir = th.getAttribute("aria-sort") === "ascending" ? -1 : 1;
    $$("th[data-key]", table).forEach(function (h) { h.removeAttribute("aria-sort"); });
    th.setAttribute("aria-sort", dir === 1 ? "ascending" : "descending");
    var value = function (el) {
      var v = el.getAttribute("data-" + key);
      if (num) { var f = parseFloat(v); return isNaN(f) ? null : f; }
      return (v || "").toLowerCase();
    };
    var items = $$(":scope > tbody.item", table);
    items.sort(function (a, b) {
      var x = value(a), y = value(b);
      if (x === null || x === "") { return (y === null || y === "") ? 0 : 1; }  // missing values last
      if (y === null || y === "") { return -1; }
      return x < y ? -dir : (x > y ? dir : 0);
    });
    items.forEach(function (el) { table.appendChild(el); });
  }
  $$("table.sortable").forEach(function (table) {
    $$("thead th[data-key]", table).forEach(function (th) {
      th.setAttribute("tabindex", "0");
      th.addEventListener("click", function () { sortTable(table, th); });
      th.addEventListener("keydown", function (e) { if (e.key === "Enter") { sortTable(table, th); } });
    });
  });

  // --- open / close one item's detail row; a question's trace is cloned from its <template> once
  function setOpen(item, open) {
    var detail = item.querySelector(":scope > tr.detail");
    if (!detail) { return; }
    if (open) {
      var tpl = detail.querySelector("template");
      if (tpl) { detail.firstElementChild.appendChild(tpl.content.cloneNode(true)); tpl.parentNode.removeChild(tpl); }
    }
    detail.hidden = !open;
    item.classList.toggle("open", open);
    $$("[aria-expanded]", item).forEach(function (el) {
      if (!detail.contains(el)) { el.setAttribute("aria-expanded", String(open)); }
    });
  }
  function toggle(item) { setOpen(item, item.querySelector(":scope > tr.detail").hidden); }

  $$("table.board tbody.item button.toggle").forEach(function (btn) {
    btn.addEventListener("click", function () { toggle(btn.closest("tbody.item")); });
  });
  $$("button[data-expand-all]").forEach(function (btn) {
    btn.addEventListener("click", function () {
      var items = $$("#" + btn.getAttribute("data-expand-all") + " > tbody.item");
      var open = items.some(function (it) { return it.querySelector(":scope > tr.detail").hidden; });
      items.forEach(function (it) { setOpen(it, open); });
    });
  });

  var qtable = document.getElementById("question-table");
  if (qtable) {
    $$("tbody.item > tr.row", qtable).forEach(function (row) {
      row.addEventListener("click", function (e) {
        if (e.target.closest("a, button, input, select")) { return; }
        toggle(row.parentNode);
      });
      row.addEventListener("keydown", function (e) {
        if (e.key === "Enter" || e.key === " ") { e.preventDefault(); toggle(row.parentNode); }
      });
    });
  }

  // --- filters of the question list
  var f = {
    source: document.getElementById("f-source"), outcome: document.getElementById("f-outcome"),
    range: document.getElementById("f-range"), rangeOut: document.getElementById("f-range-out"),
    status: document.getElementById("f-status"), text: document.getElementById("f-text"),
    count: document.getElementById("f-count")
  };
  function applyFilters() {
    if (!qtable) { return; }
    var items = $$(":scope > tbody.item", qtable);
    var src = f.source.value, out = f.outcome.value, status = f.status.value;
    var minRange = parseFloat(f.range.value) || 0, text = f.text.value.trim().toLowerCase();
    f.rangeOut.textContent = minRange.toFixed(2);
    var shown = 0;
    items.forEach(function (it) {
      var d = function (k) { return it.getAttribute("data-" + k) || ""; };
      var range = parseFloat(d("range"));
      var ok = (!src || d("source") === src) && (!out || d("outcome") === out)
        && (minRange <= 0 || (!isNaN(range) && range >= minRange - 1e-9))
        && (!status || (status === "failed" ? d("status") !== "ok" : parseInt(d("findings"), 10) > 0))
        && (!text || d("search").indexOf(text) >= 0);
      it.hidden = !ok;
      if (ok) { shown += 1; }
    });
    f.count.textContent = shown + " of " + items.length + " questions";
  }
  ["source", "outcome", "range", "status", "text"].forEach(function (k) {
    if (f[k]) { f[k].addEventListener("input", applyFilters); f[k].addEventListener("change", applyFilters); }
  });
  applyFilters();

  // --- #q-<n> in the address opens that question (links can be shared)
  function openFromHash() {
    var m = /^#q-(\d+)$/.exec(window.location.hash);
    var item = m && document.getElementById("q-" + m[1]);
    if (item && item.classList.contains("item")) { item.hidden = false; setOpen(item, true); item.scrollIntoView(); }
  }
  window.addEventListener("hashchange", openFromHash);
  openFromHash();
})();
