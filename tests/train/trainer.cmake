# trainer tests
