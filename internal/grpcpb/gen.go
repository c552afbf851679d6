// Package grpcpb holds the Go code generated from the normative A2A proto
// (package lf.a2a.v1) for the gRPC binding, and the conversions between
// those types and the model of package a2a. Only server/a2agrpc and
// client/grpcclient use it.
//
// To regenerate (protoc 3.21 or later, protoc-gen-go v1.36.12 and
// protoc-gen-go-grpc v1.6.2 on PATH):
//
//	go generate ./internal/grpcpb
//
// The reference proto imports google.api annotations (HTTP rules, method
// signatures, field behaviours) that only matter to other generators;
// ./strip removes them into a temporary copy, with go_package set to this
// package, and protoc compiles that copy as "a2a.proto".
package grpcpb

//go:generate sh -c "go run ./strip ../../../shared/reference/a2a.proto a2a.proto && protoc --go_out=. --go_opt=paths=source_relative --go-grpc_out=. --go-grpc_opt=paths=source_relative a2a.proto && rm a2a.proto"
