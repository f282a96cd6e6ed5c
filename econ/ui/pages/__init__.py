"""The app's pages: one script per page, each a `render()` run by the navigation."""
