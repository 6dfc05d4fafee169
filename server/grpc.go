package server

import (
	"context"
	"errors"
	"runtime/debug"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"go.uber.org/zap"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/reflection"
	"google.golang.org/grpc/stats"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/tap"

	rewardv1 "github.com/rewardd/rewardd/proto/reward/v1"
)

// errShuttingDown refuses new HTTP work once readiness is off (gRPC's
// GracefulStop refuses new calls by itself).
var errShuttingDown = errors.New("server is shutting down, retry on another replica")

// Flow-control windows of the gRPC server (see newGRPCServer); a stream's
// is windowBytes.
const recvConnWindow = 16 << 20

// newGRPCServer returns a gRPC server exposing g as reward.v1.RewardService,
// the standard health service and reflection (so grpcurl works), with g's
// codec and tap. Errors are mapped to statuses in one interceptor, panics
// are recovered in another; extra options (TLS credentials) come from the
// caller.
func newGRPCServer(g *grpcService, connAge time.Duration, opts ...grpc.ServerOption) (*grpc.Server, *health.Server) {
	lim, m, log := g.svc.limits(), g.m, g.log
	opts = append([]grpc.ServerOption{
		grpc.MaxRecvMsgSize(lim.MaxMessageBytes),
		grpc.MaxSendMsgSize(lim.MaxMessageBytes),
		grpc.ForceServerCodecV2(g.codec),
		grpc.InTapHandle(g.tap),
		// A fixed stream window bounds what a client sends of a request
		// before the handler reads it: a refused request costs at most
		// this much reading (with grpc's default, BDP estimation grows it
		// to megabytes). The connection window leaves room for many
		// streams at once.
		grpc.InitialWindowSize(windowBytes),
		grpc.InitialConnWindowSize(recvConnWindow),
		grpc.StatsHandler(connExpect{max: int64(lim.MaxMessageBytes)}),
		// A connection must finish its HTTP/2 handshake promptly.
		grpc.ConnectionTimeout(handshakeTimeout),
		// Idle connections are closed; and connections are recycled every
		// connAge so that clients balancing over a headless Service
		// re-resolve and find replicas a scale-up added. A call in flight
		// when its connection ages out has as long as any call may take
		// to be answered: a call accepted is answered, however late in
		// its connection's life it came.
		grpc.KeepaliveParams(keepalive.ServerParameters{
			MaxConnectionIdle: lim.IdleTimeout, MaxConnectionAge: connAge,
			MaxConnectionAgeGrace: lim.RequestTimeout + lim.WriteTimeout + graceMargin,
		}),
		grpc.ChainUnaryInterceptor(observeUnary(m, log), recoverUnary(log)),
		grpc.ChainStreamInterceptor(recoverStream(log)),
	}, opts...)
	gs := grpc.NewServer(opts...)
	gs.RegisterService(g.serviceDesc(), g)
	hs := health.NewServer()
	hs.SetServingStatus("", healthpb.HealthCheckResponse_SERVING)
	hs.SetServingStatus(rewardv1.RewardService_ServiceDesc.ServiceName, healthpb.HealthCheckResponse_SERVING)
	healthpb.RegisterHealthServer(gs, hs)
	reflection.Register(gs)
	return gs, hs
}

// graceMargin is what an aged connection's grace adds to the longest a
// call may take: the time to hand the answer to the transport.
const graceMargin = 5 * time.Second

// handshakeTimeout bounds a new gRPC connection's handshake (TLS and
// HTTP/2 settings).
const handshakeTimeout = 10 * time.Second

// grpcService is RewardService: the generated handlers call its methods.
type grpcService struct {
	rewardv1.UnimplementedRewardServiceServer
	svc   *Service
	codec protoCodec
	m     *transportMetrics
	log   *zap.Logger
	auth  *Auth
}

// newGRPCService returns RewardService over svc. auth (nil for none)
// guards its methods, checked when a call's headers arrive, before
// anything of it is read (see tap).
func newGRPCService(svc *Service, m *transportMetrics, log *zap.Logger, auth *Auth) *grpcService {
	return &grpcService{svc: svc, codec: newProtoCodec(), m: m, log: log, auth: auth}
}

// Score scores one batch. The call is admitted (its ticket is in ctx,
// holding the receipt of its message, see serviceDesc) and req is yet to
// be decoded from the bytes the codec received (received). The response
// leaves with the call's memory, which the codec releases once it has
// encoded it (callMemory).
func (g *grpcService) Score(ctx context.Context, req *rewardv1.ScoreRequest) (*rewardv1.ScoreResponse, error) {
	// The message is in: the read timeout no longer applies.
	stopReadTimeout(ctx)
	cm, account, err := g.received(ctx, ticketFrom(ctx), req)
	if err != nil {
		return nil, err
	}
	resp, err := g.svc.score(ctx, req, cm, account)
	if err != nil {
		return nil, err
	}
	if cm.pool != nil {
		g.codec.answers.put(resp, cm)
	}
	return resp, nil
}

// received decodes req from the bytes the codec received for it, into
// call memory from the service's pool, which the caller owns (see
// callMemory). With a ticket t (the call's, holding the receipt of the
// bytes as they arrived), it first reserves what decoding holds: the copy
// the request's strings share, and what decodeCost bounds; then it gives
// back the receipt. It fails with a *MemoryError when that does not fit,
// or a *RequestError when the bytes do not decode. A message the codec did
// not receive is left as it is, with call memory that is not pooled.
//
// It opens the request's account of worker time (engine.join), which its
// scoring goes on with, and returns it: the copy and the decoding are pool
// work of the request (engine.serial), cut by a pacer, so a large message
// is decoded in turns with the other requests' spans, by the worker time
// each has used, rather than beside them, taking the CPU from them.
func (g *grpcService) received(ctx context.Context, t *ticket, req *rewardv1.ScoreRequest) (*callMemory, *share, error) {
	account := g.svc.engine.join(g.svc.cfg.Limits.MaxRequestWork)
	data, ok := g.codec.receipts.take(req)
	if !ok {
		return new(callMemory), account, nil
	}
	if t != nil {
		t.received(data.Len())
		if err := t.reserve(int64(data.Len())); err != nil {
			data.Free()
			return nil, nil, err
		}
	}
	cm := g.svc.memory.get()
	held := true // data, until copied
	var refused error
	err := g.svc.engine.serial(ctx, account, func(ctx context.Context) error {
		p := &pacer{ctx: ctx}
		b, err := cm.copyWire(data, p)
		data.Free()
		held = false
		if err != nil {
			return err
		}
		if t != nil {
			sh := protoShape(b, p)
			if err := p.failed(); err != nil {
				return err
			}
			refused = t.reserve(decodeCost(len(b), sh))
			t.giveReceipt()
			if refused != nil {
				return refused
			}
		}
		return decodeRequest(b, req, cm, p)
	})
	if held {
		data.Free()
	}
	if refused != nil {
		cm.release()
	}
	if err != nil {
		return nil, nil, err
	}
	return cm, account, nil
}

func (g *grpcService) ListFunctions(ctx context.Context, req *rewardv1.ListFunctionsRequest) (*rewardv1.ListFunctionsResponse, error) {
	return g.svc.ListFunctions(ctx, req)
}

// observeUnary maps the handler's error to a status (toStatus, the one place)
// and records the request in the metrics of RewardService methods.
func observeUnary(m *transportMetrics, log *zap.Logger) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		start := time.Now()
		resp, err := handler(ctx, req)
		method := info.FullMethod[strings.LastIndexByte(info.FullMethod, '/')+1:]
		st := toStatus(log, method, err)
		if strings.HasPrefix(info.FullMethod, "/"+rewardv1.RewardService_ServiceDesc.ServiceName+"/") && slices.Contains(methods(), method) {
			m.requests.WithLabelValues(method, st.Code().String()).Inc()
			m.requestDuration.WithLabelValues(method).Observe(time.Since(start).Seconds())
		}
		log.Debug("request", zap.String("method", method), zap.Stringer("code", st.Code()), zap.Duration("took", time.Since(start)))
		if st.Code() != codes.OK {
			return nil, st.Err()
		}
		return resp, nil
	}
}

// recoverUnary turns a handler panic into an internal error; grpc-go itself
// does not recover handler panics, and one bad request must not kill the
// process.
func recoverUnary(log *zap.Logger) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (resp any, err error) {
		defer func() {
			if p := recover(); p != nil {
				log.Error("handler panicked", zap.String("method", info.FullMethod), zap.Any("panic", p), zap.ByteString("stack", debug.Stack()))
				err = status.Error(codes.Internal, "internal error")
			}
		}()
		return handler(ctx, req)
	}
}

// recoverStream is recoverUnary for streaming handlers. A panic in a batch's
// own goroutine is caught by the engine per rollout; this catches the rest.
func recoverStream(log *zap.Logger) grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) (err error) {
		defer func() {
			if p := recover(); p != nil {
				log.Error("handler panicked", zap.String("method", info.FullMethod), zap.Any("panic", p), zap.ByteString("stack", debug.Stack()))
				err = status.Error(codes.Internal, "internal error")
			}
		}()
		return handler(srv, ss)
	}
}

// tap runs when a call's headers arrive, before anything of its message is
// read. It refuses a RewardService call without the token, so that an
// unauthenticated client never holds an admission slot or has its body
// read. It admits a Score call to wait for its receipt (see serviceDesc):
// it reserves what grpc may buffer of the message meanwhile (windowBytes),
// refusing the call at once when that does not fit; and it ends the call
// if its message has not arrived within limits.read_timeout. A ScoreStream
// gets a context its handler can end (its idle and write timeouts).
func (g *grpcService) tap(ctx context.Context, info *tap.Info) (context.Context, error) {
	if !guarded(info.FullMethodName) {
		return ctx, nil
	}
	method := info.FullMethodName[strings.LastIndexByte(info.FullMethodName, '/')+1:]
	if !g.auth.authorizedMD(info.Header) {
		if slices.Contains(methods(), method) {
			g.m.requests.WithLabelValues(method, codes.Unauthenticated.String()).Inc()
		}
		// The wait holds this connection's reader only: the client's other
		// calls on it wait too, no one else's.
		if p, ok := peer.FromContext(ctx); ok {
			g.auth.refuse(ctx, p.Addr.String())
		}
		return nil, errUnauthenticated
	}
	switch info.FullMethodName {
	case rewardv1.RewardService_Score_FullMethodName:
		t := g.svc.ticket()
		if err := t.reserveWindow(); err != nil {
			t.release()
			g.m.requests.WithLabelValues(method, codes.ResourceExhausted.String()).Inc()
			return nil, status.Error(codes.ResourceExhausted, err.Error())
		}
		t.expect = expectFrom(ctx)
		tc := newTimedContext(ctx)
		context.AfterFunc(tc, t.release)
		tc.stopRead = tc.expireAfter(g.svc.limits().ReadTimeout, func() { g.m.timeouts.WithLabelValues("read").Inc() })
		return withTicket(tc, t), nil
	case rewardv1.RewardService_ScoreStream_FullMethodName:
		return newTimedContext(ctx), nil
	}
	return ctx, nil
}

// serviceDesc is RewardService's, with Score's handler admitting the call
// in the call's own goroutine before the generated handler reads its
// message: it waits for the receipt, limits.max_message_bytes (grpc reads
// a whole message before anyone sees its length), then takes a count
// slot. A wait that ends (limits.read_timeout, the client's deadline) or
// a slot refused answers RESOURCE_EXHAUSTED. Only here can a call be
// answered with a status of ours after the tap and before the read: a
// stats.Handler runs there too, but ending the call's context from it
// makes grpc answer with the context's error (DEADLINE_EXCEEDED,
// CANCELED, or INTERNAL for any other cause).
func (g *grpcService) serviceDesc() *grpc.ServiceDesc {
	desc := rewardv1.RewardService_ServiceDesc
	desc.Methods = slices.Clone(desc.Methods)
	for i, md := range desc.Methods {
		if md.MethodName != "Score" {
			continue
		}
		read := md.Handler
		desc.Methods[i].Handler = func(srv any, ctx context.Context, dec func(any) error, in grpc.UnaryServerInterceptor) (any, error) {
			if t := ticketFrom(ctx); t != nil {
				if err := g.admit(ctx, t); err != nil {
					stopReadTimeout(ctx)
					g.m.requests.WithLabelValues(md.MethodName, codes.ResourceExhausted.String()).Inc()
					return nil, toStatus(g.log, md.MethodName, err).Err()
				}
			}
			return read(srv, ctx, dec, in)
		}
	}
	return &desc
}

// admit takes the receipt of a Score call's message and a count slot for
// it; the receipt covers what the tap reserved for grpc's window.
func (g *grpcService) admit(ctx context.Context, t *ticket) error {
	if err := t.takeReceipt(ctx, int64(g.svc.limits().MaxMessageBytes), false); err != nil {
		return err
	}
	t.giveWindow()
	return t.takeSlot()
}

// connExpect is a grpc stats.Handler that gives each connection a cell for
// the size of its last Score message (max before the first): the guess
// that orders the receipts its next calls wait for.
type connExpect struct{ max int64 }

type expectKey struct{}

func (h connExpect) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context {
	cell := new(atomic.Int64)
	cell.Store(h.max)
	return context.WithValue(ctx, expectKey{}, cell)
}

func (connExpect) HandleConn(context.Context, stats.ConnStats)                     {}
func (connExpect) TagRPC(ctx context.Context, _ *stats.RPCTagInfo) context.Context { return ctx }
func (connExpect) HandleRPC(context.Context, stats.RPCStats)                       {}

// expectFrom returns the connection's cell of ctx, or nil.
func expectFrom(ctx context.Context) *atomic.Int64 {
	cell, _ := ctx.Value(expectKey{}).(*atomic.Int64)
	return cell
}
