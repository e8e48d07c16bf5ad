module github.com/loopbreaker/loopbreaker/cmd/looprun

go 1.26.0

require (
	github.com/loopbreaker/loopbreaker v0.1.0
	github.com/loopbreaker/loopbreaker/protect v0.1.0
	github.com/loopbreaker/loopbreaker/redisstore v0.1.0
	github.com/redis/go-redis/v9 v9.18.0
	github.com/stretchr/testify v1.12.1
)

require (
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/dgryski/go-rendezvous v0.0.0-20200823014737-9f7001d12a5f // indirect
	go.uber.org/atomic v1.11.0 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	mvdan.cc/sh/v3 v3.14.1 // indirect
)
