module example.com/hello

go 1.24

require example.com/greet v0.0.0

replace example.com/greet => ./greet
