// Progressive enhancement for the workspace shell (ADR 0006). The page works
// without it. Below 975 px the top bar hides while scrolling down and comes
// back when scrolling up; an open menu closes on Escape.
(function () {
  var bar = document.querySelector("[data-topbar]");
  if (!bar) return;
  var narrow = window.matchMedia("(max-width: 974.98px)");
  var last = window.scrollY;
  window.addEventListener(
    "scroll",
    function () {
      var y = window.scrollY;
      var menu = bar.querySelector("[data-hamburger]");
      var hide = narrow.matches && y > last && y > 56 && !(menu && menu.open);
      bar.setAttribute("data-hidden", hide ? "true" : "false");
      last = y;
    },
    { passive: true },
  );
  document.addEventListener("keydown", function (event) {
    if (event.key !== "Escape") return;
    document.querySelectorAll("details[open]").forEach(function (d) {
      d.open = false;
    });
  });
})();
