"""Which system APIs (MIGraphX, HIP, ORT, MIOpen) a C++ tree calls, and whether the headers it compiles with
have them: the scanner, the compile database, the table of libraries (data/system_apis.toml)."""
