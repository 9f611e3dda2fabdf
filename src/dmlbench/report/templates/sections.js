// Folded sections (details.section): a link to a section, or to anything inside one, opens it
// (on load with the address's #anchor, and on a click of an in-page link); the buttons of the
// section list open or fold them all.
(function () {
  function reveal(id) {
    for (var node = id && document.getElementById(id); node; node = node.parentElement) {
      if (node.tagName === "DETAILS") { node.open = true; }
    }
  }
  function fromAddress() { reveal(decodeURIComponent(location.hash.slice(1))); }
  window.addEventListener("hashchange", fromAddress);
  document.addEventListener("click", function (event) {
    var link = event.target.closest ? event.target.closest("a[href^='#']") : null;
    if (link) { reveal(decodeURIComponent(link.getAttribute("href").slice(1))); }
  });
  document.querySelectorAll("button[data-sections]").forEach(function (button) {
    button.addEventListener("click", function () {
      var open = button.getAttribute("data-sections") === "open";
      document.querySelectorAll("details.section").forEach(function (d) { d.open = open; });
    });
  });
  fromAddress();
})();
