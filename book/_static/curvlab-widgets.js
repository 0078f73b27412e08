// Loaded on pages with saved widget state, after vendor/require.js and before
// vendor/html-manager/embed-amd.js (see nb_ipywidgets_js in _config.yml).
(function () {
  "use strict";
  // 1. Where the widgets HTML manager finds its font files: this site's
  //    _static/vendor/html-manager/, whatever the page's depth. Without it the manager looks
  //    for them relative to the page (404s).
  var managerDir = new URL("vendor/html-manager/", document.currentScript.src).href;
  window.__jupyter_widgets_assets_path__ = managerDir;
  if (window.requirejs) {
    window.requirejs.config({
      paths: { "@jupyter-widgets/html-manager/dist": managerDir.replace(/\/$/, "") },
    });
  }

  // 2. ipywidgets 8 typesets widget labels with the MathJax 2 call MathJax.Hub.Queue; the site
  //    serves MathJax 3. This small bridge forwards those calls to MathJax 3's typesetPromise.
  function typeset(element) {
    var mathjax = window.MathJax;
    var ready = mathjax && mathjax.startup && mathjax.startup.promise;
    Promise.resolve(ready).then(function () {
      if (window.MathJax && window.MathJax.typesetPromise) {
        return window.MathJax.typesetPromise(element ? [element] : undefined);
      }
    }).catch(function () {});
  }
  function installBridge() {
    var mathjax = window.MathJax;
    if (mathjax && !mathjax.Hub) {
      mathjax.Hub = {
        Queue: function () {
          Array.prototype.forEach.call(arguments, function (job) {
            if (Array.isArray(job) && job[0] === "Typeset") typeset(job[2]);
          });
        },
      };
    }
  }
  installBridge();
  document.addEventListener("DOMContentLoaded", installBridge);
  window.addEventListener("load", installBridge);
})();
