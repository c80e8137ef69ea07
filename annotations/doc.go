// Package annotations is the home of the nginx annotation families, one
// package each (annotations/<family>), registered with the registry in
// init(). annotations/all imports every family.
package annotations
