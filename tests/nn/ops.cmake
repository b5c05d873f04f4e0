# ops tests
