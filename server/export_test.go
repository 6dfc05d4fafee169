package server

// Routes lists what s's HTTP port serves, one "METHOD /path" per route, in
// the order they were registered.
func Routes(s *Server) []string { return s.routes }
