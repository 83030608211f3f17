// Keyboard first: `/` focuses the search box (the pages work without this script).
document.addEventListener("keydown", function (event) {
  var target = event.target;
  var typing = target && (target.tagName === "INPUT" || target.tagName === "TEXTAREA" || target.tagName === "SELECT");
  if (event.key === "/" && !typing && !event.ctrlKey && !event.metaKey && !event.altKey) {
    var box = document.getElementById("q");
    if (box) {
      event.preventDefault();
      box.focus();
      box.select();
    }
  }
});
