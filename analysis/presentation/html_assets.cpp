#include "html_assets.hpp"

namespace ringscale::analysis {

const char* const html_page_css = R"CSS(
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;color:#1d232a;
  background:#fff;line-height:1.45}
header{padding:.6em 1.2em;border-bottom:1px solid #d0d7de;background:#f6f8fa}
header h1{margin:.2em 0;font-size:1.5em}
nav{display:flex;flex-wrap:wrap;gap:.3em .9em;font-size:.92em}
main{padding:0 1.2em 2em;max-width:1500px}
section{border-bottom:1px solid #eaeef2;padding-bottom:.6em}
h2{margin-top:1.3em;font-size:1.3em}h3{font-size:1.08em}
a{color:#0b5cad}a.anchor{color:#8c959f;text-decoration:none;margin-left:.3em;font-weight:normal}
p,li,td,th,summary{overflow-wrap:anywhere}
.controls{display:flex;flex-wrap:wrap;gap:.5em 1.2em;align-items:center;margin-top:.5em;
  font-size:.92em}
.controls input[type=search]{min-width:14em}
.scroll{overflow-x:auto;max-width:100%;margin:.6em 0;border:1px solid #eaeef2}
table{border-collapse:collapse;font-size:.86em}
th,td{padding:.25em .55em;border-bottom:1px solid #eaeef2;text-align:left;vertical-align:top;
  max-width:40em}
th{background:#f6f8fa;cursor:pointer;position:sticky;top:0;user-select:none}
th.asc::after{content:" \25B2"}th.desc::after{content:" \25BC"}
tr:target,p.change:target,details:target{background:#fff8c5}
code{background:#f6f8fa;padding:0 .2em}
.plot svg{max-width:100%;height:auto;display:block}
.plot g.hv,.plot g.w,.plot g.w2,.plot g.w3,.plot g.w4,.plot g.w5{fill:none;color:black;
  stroke:currentColor;stroke-width:1px;stroke-linecap:butt;stroke-linejoin:miter}
.plot g.w2{stroke:black;stroke-width:.5px}.plot g.w3{color:gray;stroke-width:.5px}
.plot g.w4{color:gray;stroke:gray}.plot g.w5{stroke-width:2px}.plot use:not([color]){color:rgb(64,64,64)}
.plot{margin:.5em 0}
.plot.lazy{width:100%;max-width:900px;aspect-ratio:900/320}
details.series{border:1px solid #eaeef2;margin:.4em 0;padding:.2em .6em}
details.series summary{cursor:pointer}
details.series .env{color:#57606a}details.series .facts{color:#57606a;font-size:.9em}
p.note{color:#57606a;font-size:.92em}p.change{color:#9a2a2a;margin:.3em 0}
.hidden{display:none !important}
.hide-marked g.marked{display:none}
@media print{header .controls,nav{display:none}.scroll{overflow:visible}
  details.series{break-inside:avoid}section{break-inside:auto}}
)CSS";

const char* const html_page_js = R"JS(
(function () {
  "use strict";
  function cellValue(row, i) {
    var c = row.cells[i];
    if (!c) return "";
    var v = c.getAttribute("data-v");
    return v !== null ? parseFloat(v) : c.textContent.trim().toLowerCase();
  }
  function sortBy(th) {
    var table = th.closest("table"), body = table.tBodies[0];
    var i = Array.prototype.indexOf.call(th.parentNode.cells, th);
    var asc = !th.classList.contains("asc");
    Array.prototype.forEach.call(th.parentNode.cells, function (h) {
      h.classList.remove("asc", "desc");
    });
    th.classList.add(asc ? "asc" : "desc");
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var x = cellValue(a, i), y = cellValue(b, i);
      if (typeof x === "number" && typeof y === "number") return asc ? x - y : y - x;
      x = String(x); y = String(y);
      return asc ? x.localeCompare(y) : y.localeCompare(x);
    });
    rows.forEach(function (r) { body.appendChild(r); });
  }
  document.querySelectorAll("table.sortable th").forEach(function (th) {
    th.addEventListener("click", function () { sortBy(th); });
  });
  var field = document.getElementById("filter-field");
  var text = document.getElementById("filter-text");
  var changed = document.getElementById("changed-only");
  var marked = document.getElementById("show-marked");
  var items = document.querySelectorAll("[data-f]");
  var tokens = {};
  items.forEach(function (el) {
    el.getAttribute("data-f").split(" ").forEach(function (t) {
      if (t && (t.indexOf("=") > 0 || t.indexOf("/") > 0)) tokens[t] = true;
    });
  });
  Object.keys(tokens).sort().slice(0, 2000).forEach(function (t) {
    var o = document.createElement("option");
    o.value = t;
    o.textContent = t;
    field.appendChild(o);
  });
  function apply() {
    var want = field.value, q = text.value.trim().toLowerCase(), only = changed.checked;
    items.forEach(function (el) {
      var f = " " + el.getAttribute("data-f") + " ";
      var hide = (want && f.indexOf(" " + want + " ") < 0) ||
          (q && f.toLowerCase().indexOf(q) < 0 && el.textContent.toLowerCase().indexOf(q) < 0) ||
          (only && el.hasAttribute("data-history") && !el.hasAttribute("data-changed"));
      el.classList.toggle("hidden", !!hide);
    });
  }
  field.addEventListener("change", apply);
  text.addEventListener("input", apply);
  changed.addEventListener("change", apply);
  marked.addEventListener("change", function () {
    document.body.classList.toggle("hide-marked", !marked.checked);
  });
  // A page of a few history charts draws them all at once; a big one (hundreds of series)
  // draws each (its template's SVG put in place) when it nears the view, so it opens fast.
  function draw(box) {
    var t = box.querySelector("template");
    if (!t) return;
    box.appendChild(t.content.cloneNode(true));
    t.remove();
    box.classList.remove("lazy");
  }
  var lazy = document.querySelectorAll(".plot.lazy");
  var few = lazy.length <= 32 || !("IntersectionObserver" in window);
  var seen = few ? null : new IntersectionObserver(function (es) {
    es.forEach(function (e) {
      if (e.isIntersecting) { draw(e.target); seen.unobserve(e.target); }
    });
  }, {rootMargin: "600px"});
  lazy.forEach(function (box) { if (seen) seen.observe(box); else draw(box); });
  window.addEventListener("beforeprint", function () {
    document.querySelectorAll("details.series").forEach(function (d) { d.open = true; });
    lazy.forEach(draw);
  });
})();
)JS";

} // namespace ringscale::analysis
