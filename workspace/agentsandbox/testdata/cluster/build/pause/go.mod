module helikon.test/pause

go 1.26.0
