// Oficina webhook portal: the only script. Every page works without it;
// it only sends the login form at once and asks before destructive
// actions. Served from this origin (script-src 'self'): no inline script.
(function () {
  "use strict";
  var login = document.getElementById("login-form");
  if (login && login.dataset.auto === "1") {
    login.submit();
  }
  document.addEventListener("submit", function (e) {
    var msg = e.target.getAttribute("data-confirm");
    if (msg && !window.confirm(msg)) {
      e.preventDefault();
    }
  });
})();
