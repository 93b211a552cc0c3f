// Answers the search page's fetches of result pages from search-pages.js,
// so that summaries appear when the course is opened from disk (file://),
// where a browser refuses fetch(). Other requests go to the network as usual.
(function () {
  "use strict";
  const pages = window.COURSE_SEARCH_PAGES || {};
  const root = new URL(document.documentElement.dataset.content_root || "./",
                       window.location.href);
  const byUrl = new Map();
  for (const [name, html] of Object.entries(pages))
    byUrl.set(new URL(name, root).href, html);
  const fetchFromNetwork = window.fetch.bind(window);

  window.fetch = function (input, init) {
    const url = new URL(typeof input === "string" ? input : input.url,
                        window.location.href);
    url.hash = "";
    url.search = "";
    const html = byUrl.get(url.href);
    if (html === undefined) return fetchFromNetwork(input, init);
    return Promise.resolve(new Response("<html><body>" + html + "</body></html>",
                                        { headers: { "Content-Type": "text/html" } }));
  };
})();
