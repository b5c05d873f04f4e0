# token dataset / prepare tests
