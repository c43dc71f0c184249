// The task list reloads itself every few seconds (body data-refresh="<seconds>").
"use strict";
(function () {
  var seconds = Number(document.body && document.body.dataset.refresh);
  if (seconds > 0) {
    setTimeout(function () { window.location.reload(); }, seconds * 1000);
  }
})();
