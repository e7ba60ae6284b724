module example.com/greet

go 1.24
