package engine

import (
	"errors"
	"fmt"
	"strings"
	"sync"
)

// Registry hands out engines by name, creating each (name, model) pair
// once and sharing it: a server's sessions share one model in memory and
// one pool of tracer workers. It is safe for concurrent use.
type Registry struct {
	base Options

	mu      sync.Mutex
	engines map[string]Engine
	real    *RealEngine
}

// NewRegistry returns a registry whose engines use base (a Get that names
// a model file overrides base.Model).
func NewRegistry(base Options) *Registry {
	return &Registry{base: base, engines: map[string]Engine{}}
}

// Get returns the engine called name ("" = Default), for model the model
// file of the model engine ("" = base.Model, the server's --model, else the
// default model; ignored by others).
func (r *Registry) Get(name, model string) (Engine, error) {
	name = strings.ToLower(strings.TrimSpace(name))
	if name == "" {
		name = Default
	}
	if name != Model {
		model = ""
	}
	key := name + "\x00" + model
	r.mu.Lock()
	defer r.mu.Unlock()
	if e, ok := r.engines[key]; ok {
		return e, nil
	}
	if name == Real {
		return r.realLocked(), nil
	}
	opts := r.base
	if model != "" {
		opts.Model = model
		opts.Predictor = nil
	}
	e, err := New(name, opts)
	if err != nil {
		return nil, err
	}
	r.engines[key] = e
	return e, nil
}

// Real is the registry's real engine (for verify).
func (r *Registry) Real() *RealEngine {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.realLocked()
}

func (r *Registry) realLocked() *RealEngine {
	if r.real == nil {
		r.real = NewReal(r.base)
		r.engines[Real+"\x00"] = r.real
	}
	return r.real
}

// Close closes every engine.
func (r *Registry) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	var errs []error
	for k, e := range r.engines {
		if err := e.Close(); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", strings.ReplaceAll(k, "\x00", " "), err))
		}
	}
	r.engines = map[string]Engine{}
	r.real = nil
	return errors.Join(errs...)
}
