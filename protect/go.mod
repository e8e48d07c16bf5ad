module github.com/loopbreaker/loopbreaker/protect

go 1.26.0

require (
	github.com/loopbreaker/loopbreaker v0.1.0
	github.com/stretchr/testify v1.12.1
	mvdan.cc/sh/v3 v3.14.1
)

require go.yaml.in/yaml/v3 v3.0.5 // indirect
