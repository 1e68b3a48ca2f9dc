// swarm view: "/" focuses the runs list's search box. Nothing else runs here.
"use strict";
document.addEventListener("keydown", function (e) {
  if (e.key !== "/" || e.ctrlKey || e.metaKey || e.altKey) return;
  var t = e.target;
  if (t && (t.tagName === "INPUT" || t.tagName === "TEXTAREA" || t.tagName === "SELECT")) return;
  var box = document.getElementById("search");
  if (box) { e.preventDefault(); box.focus(); }
});
