"""Installing a wheel the way a user gets it (a fresh venv, pip) and checking it there: the driver on the host
(run.py), the self-check and ORT-range runs (selfcheck.py), the venvs (venvs.py). inside/ holds the scripts that run
in the test venv, with the standard library and the packages under test only; what ships inside the wheel is
toolkit/wheel/templates/."""
