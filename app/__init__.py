"""The Layout Advisor dashboard (Streamlit). Start it with ``layout-advisor ui``.

``streamlit_app.py`` builds the navigation, ``app_pages/`` render, ``services`` is the only
module that talks to the engine (cached ``engine.api`` calls), ``views`` reshapes results
into pandas frames and labels, ``charts`` turns them into plotly figures and
``components`` holds the widgets several pages share.
"""
