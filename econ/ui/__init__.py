"""Streamlit pages and components: read widgets, build a scenario, call the library, show results."""
