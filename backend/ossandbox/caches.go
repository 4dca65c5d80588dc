package ossandbox

// CacheScope says how long the named caches ([NamedCaches]) of the OS
// sandbox's commands live ([Options].Caches).
type CacheScope string

const (
	// CacheSession (the zero value) keeps the tools' caches in the
	// session home, at their usual places beneath HOME: they last as long
	// as the backend and no longer.
	CacheSession CacheScope = ""
	// CacheProject keeps each named cache in a directory of the project
	// (the root), shared by every session on that project, across
	// sessions: what one session's commands put there, the next one's
	// find. It is the scope to choose when sharing: a poisoned entry (see
	// the package documentation) reaches only later sessions of the same
	// project, which the same agent could change anyway.
	CacheProject CacheScope = "project"
	// CacheUser keeps each named cache once for the user, shared by every
	// session on every project: the warmest, and a poisoned entry left by
	// one project's session reaches every other project's.
	CacheUser CacheScope = "user"
)

// NamedCache is a cache directory kept across sessions ([Options].Caches)
// and the environment variables that point the tool to it.
type NamedCache struct {
	// Name is the directory's name in the scope's directory.
	Name string
	// Env are the variables set to the directory.
	Env []string
}

// NamedCaches are the caches [Options].Caches keeps: Go's build cache and
// module cache, npm's, pip's, Cargo's home (its registry, git checkouts and
// installed binaries; credentials written there stay in the cache), Yarn's,
// ccache's and Gradle's user home.
var NamedCaches = []NamedCache{
	{"go-build", []string{"GOCACHE"}},
	{"go-mod", []string{"GOMODCACHE"}},
	{"npm", []string{"npm_config_cache"}},
	{"pip", []string{"PIP_CACHE_DIR"}},
	{"cargo", []string{"CARGO_HOME"}},
	{"yarn", []string{"YARN_CACHE_FOLDER"}},
	{"ccache", []string{"CCACHE_DIR"}},
	{"gradle", []string{"GRADLE_USER_HOME"}},
}

// DefaultCacheSize is the cap of the named caches of one scope together
// ([Options].CacheSize).
const DefaultCacheSize = 16 << 30
