// Live updates: follow the folder's event queue (Server-Sent Events) and re-read this page's
// <main> when something happens. Calls are not events (there are far too many), so a page
// with traffic charts ([data-chart]) also re-reads itself every CHART_MS while it is visible
// and swaps only those charts.
(function () {
  "use strict";
  if (!window.EventSource || !window.fetch) { return; }
  var badge = document.getElementById("live");
  var busy = false, again = false;
  var CHART_MS = 5000;

  function typing() {
    var fields = document.querySelectorAll("main input[type=text], main input[type=password]");
    for (var i = 0; i < fields.length; i++) { if (fields[i].value) { return true; } }
    return false;
  }

  function refresh() {
    if (busy) { again = true; return; }
    if (typing()) { badge.textContent = "live (changes waiting: clear the form or reload)"; return; }
    busy = true;
    fetch(location.pathname, { credentials: "same-origin", cache: "no-store" })
      .then(function (r) { return r.ok ? r.text() : null; })
      .then(function (html) {
        if (html) {
          var fresh = new DOMParser().parseFromString(html, "text/html").getElementById("main");
          var main = document.getElementById("main");
          if (fresh && main) { main.replaceChildren.apply(main, Array.from(fresh.childNodes)); }
        }
      })
      .catch(function () {})
      .then(function () { busy = false; if (again) { again = false; refresh(); } });
  }

  var charting = false;  // one chart read at a time, however slow the answer
  function charts() {
    if (busy || charting || document.hidden || !document.querySelector("[data-chart]")) { return; }
    charting = true;
    fetch(location.pathname, { credentials: "same-origin", cache: "no-store" })
      .then(function (r) { return r.ok ? r.text() : null; })
      .then(function (html) {
        if (!html || busy) { return; }
        var fresh = new DOMParser().parseFromString(html, "text/html");
        var shown = document.querySelectorAll("[data-chart][id]");
        for (var i = 0; i < shown.length; i++) {
          var next = fresh.getElementById(shown[i].id);
          if (next && next.hasAttribute("data-chart")) { shown[i].replaceWith(document.importNode(next, true)); }
        }
      })
      .catch(function () {})
      .then(function () { charting = false; });
  }
  setInterval(charts, CHART_MS);

  // From the moment the page was rendered: events while it loaded are not lost. A reconnect
  // sends Last-Event-ID, which the server prefers.
  var after = document.body.getAttribute("data-events-after") || "";
  var source = new EventSource("/ui/events" + (/^[0-9]+$/.test(after) ? "?after=" + after : ""));
  source.onopen = function () { badge.textContent = "live"; };
  source.onerror = function () { badge.textContent = "reconnecting"; };
  source.onmessage = function (message) {
    var event;
    try { event = JSON.parse(message.data); } catch (e) { return; }
    if (event.type === "phase_changed" && event.phase) {
      var cells = document.querySelectorAll("[data-phase-of]");
      for (var i = 0; i < cells.length; i++) {
        if (cells[i].getAttribute("data-phase-of") === event.subject) { cells[i].textContent = event.phase; }
      }
    }
    refresh();
  };
})();
