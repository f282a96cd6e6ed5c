"""Streamlit entry point: `streamlit run app.py` (or `make app`, or `econ app`)."""

from econ.ui.streamlit_app import main

main()
