class RefreshResult: pass
def refresh_series(*a): pass
