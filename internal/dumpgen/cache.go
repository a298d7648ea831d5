package dumpgen

import (
	"fmt"
	"sync"
)

var (
	repoOnce sync.Once
	repoSet  *Set
	repoErr  error

	cacheMu sync.Mutex
	cache   = map[Config]cached{}
)

type cached struct {
	data []byte
	res  Result
}

// Repo returns the Set of LoadRepo, loaded once per process.
func Repo() (*Set, error) {
	repoOnce.Do(func() { repoSet, repoErr = LoadRepo() })
	return repoSet, repoErr
}

// Cached returns a dump of the repository's templates made to cfg, made
// once per process and shared: callers must not modify it. It is meant for
// benchmarks that read the same dump many times; keep cfg.Goroutines to a
// few hundred thousand (about 950 bytes each).
func Cached(cfg Config) ([]byte, Result, error) {
	cacheMu.Lock()
	defer cacheMu.Unlock()
	if c, ok := cache[cfg]; ok {
		return c.data, c.res, nil
	}
	s, err := Repo()
	if err != nil {
		return nil, Result{}, err
	}
	data, res, err := s.Generate(cfg)
	if err != nil {
		return nil, Result{}, fmt.Errorf("dumpgen: generating %d goroutines: %w", cfg.Goroutines, err)
	}
	cache[cfg] = cached{data, res}
	return data, res, nil
}
