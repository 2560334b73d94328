package main

import (
	"log/slog"
	"os"

	"github.com/cairndb/cairn/internal/storage/files"
)

// faultsEnv names the environment variable that injects storage faults
// into a node's files (testing only). Its syntax is package storage/files'
// (WithFaults): rules separated by ';', each
// op=write|sync|create|rename|remove|read|any,path=GLOB[,after=N][,errno=EIO|ENOSPC].
// Unset or empty: no faults.
const faultsEnv = "CAIRN_FAULTS"

// nodeFS returns the file system a node command's files (its own and its
// engine's) go through: files.Default, wrapped with the faults of
// CAIRN_FAULTS when it is set, which is logged once on log. A spec that
// does not parse is a usage error (exit 2).
func nodeFS(log *slog.Logger) (files.FS, error) {
	spec := os.Getenv(faultsEnv)
	if spec == "" {
		return files.Default, nil
	}
	fs, err := files.WithFaults(files.Default, spec)
	if err != nil {
		return nil, usageErr("%s: %v", faultsEnv, err)
	}
	log.Warn(faultsEnv + " is set: injecting storage faults (testing only): " + spec)
	return fs, nil
}
