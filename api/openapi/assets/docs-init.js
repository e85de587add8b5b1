// Starts Scalar's reference UI on /docs over the document named by this tag's data-spec-url. A file, not an
// inline script, so the page's Content-Security-Policy can allow scripts of its own origin only.
(() => {
  const url = document.currentScript?.dataset.specUrl;
  if (url && window.Scalar && typeof window.Scalar.createApiReference === "function") {
    document.getElementById("fallback")?.remove();
    window.Scalar.createApiReference("#app", { url, withDefaultFonts: false });
  }
})();
