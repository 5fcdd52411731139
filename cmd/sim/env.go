package main

import "os"

// lookupEnv is the one place the CLI reads the process environment.
func lookupEnv(key string) (string, bool) { return os.LookupEnv(key) }
