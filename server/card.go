package server

// WellKnownCardPath is where agent cards are published (A2A §8.2).
const WellKnownCardPath = "/.well-known/agent-card.json"
