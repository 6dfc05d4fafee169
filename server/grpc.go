package server

import (
	"context"
	"errors"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"go.uber.org/zap"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/reflection"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/tap"

	rewardv1 "github.com/rewardd/rewardd/proto/reward/v1"
)

// errShuttingDown refuses new HTTP work once readiness is off (gRPC's
// GracefulStop refuses new calls by itself).
var errShuttingDown = errors.New("server is shutting down, retry on another replica")

// Flow-control windows of the gRPC server (see NewGRPCServer).
const (
	recvStreamWindow = 128 << 10
	recvConnWindow   = 16 << 20
	// readBuffer is how much one read from a connection takes at most.
	// grpc's default, 32 KiB, read a 1 MB request in ~30 system calls;
	// on this VM a system call costs microseconds.
	readBuffer = 256 << 10
)

// NewGRPCServer returns a gRPC server exposing svc as reward.v1.RewardService,
// the standard health service and reflection (so grpcurl works). Errors are
// mapped to statuses in one interceptor, panics are recovered in another.
// auth (nil for none) guards the RewardService methods; extra options (TLS
// credentials) come from the caller.
func NewGRPCServer(svc *Service, m *Metrics, log *zap.Logger, auth *Auth, opts ...grpc.ServerOption) (*grpc.Server, *health.Server) {
	opts = append([]grpc.ServerOption{
		grpc.MaxRecvMsgSize(svc.cfg.Limits.MaxMessageBytes),
		grpc.MaxSendMsgSize(svc.cfg.Limits.MaxMessageBytes),
		grpc.ForceServerCodecV2(newProtoCodec()),
		grpc.InTapHandle(admitScore(svc.engine, m)),
		// A fixed stream window bounds what a client sends of a request
		// before the handler reads it. The tap refuses an excess request
		// on its headers, but with grpc's default (a window grown by BDP
		// estimation to megabytes) the client had already sent the whole
		// body, which the server then read and dropped: with the server
		// on one core and 10x its capacity offered, refusals took half
		// its CPU and accepted throughput fell to 50-58% of capacity.
		// With 128 KiB it stayed at 85-90%, and capacity itself did not
		// change beyond noise (64 KiB cost a quarter of it: more window
		// updates per request). The connection window leaves room for
		// many streams at once.
		grpc.InitialWindowSize(recvStreamWindow),
		grpc.InitialConnWindowSize(recvConnWindow),
		grpc.ReadBufferSize(readBuffer),
		// Connections are recycled every few minutes (in-flight calls get
		// a grace period) so that clients balancing over a headless Service
		// re-resolve and find replicas a scale-up added.
		grpc.KeepaliveParams(keepalive.ServerParameters{MaxConnectionAge: 5 * time.Minute, MaxConnectionAgeGrace: time.Minute}),
		grpc.ChainUnaryInterceptor(observeUnary(m, log), auth.UnaryInterceptor(), recoverUnary(log)),
		grpc.ChainStreamInterceptor(auth.StreamInterceptor(), recoverStream(log)),
	}, opts...)
	gs := grpc.NewServer(opts...)
	gs.RegisterService(rewardServiceDesc(), &grpcService{svc: svc, m: m, log: log})
	hs := health.NewServer()
	hs.SetServingStatus("", healthpb.HealthCheckResponse_SERVING)
	hs.SetServingStatus(rewardv1.RewardService_ServiceDesc.ServiceName, healthpb.HealthCheckResponse_SERVING)
	healthpb.RegisterHealthServer(gs, hs)
	reflection.Register(gs)
	return gs, hs
}

// grpcService adapts Service to the generated interface.
type grpcService struct {
	rewardv1.UnimplementedRewardServiceServer
	svc *Service
	m   *Metrics
	log *zap.Logger
}

func (g *grpcService) Score(ctx context.Context, req *rewardv1.ScoreRequest) (*rewardv1.ScoreResponse, error) {
	return g.svc.Score(ctx, req)
}

// rewardServiceDesc is the generated description of RewardService with
// the Score handler replaced by scoreHandler.
func rewardServiceDesc() *grpc.ServiceDesc {
	desc := rewardv1.RewardService_ServiceDesc
	desc.Methods = slices.Clone(desc.Methods)
	for i := range desc.Methods {
		if desc.Methods[i].MethodName == "Score" {
			desc.Methods[i].Handler = scoreHandler
		}
	}
	return &desc
}

// scoreHandler is the generated Score handler, except that it decodes into
// a scoreRequest, so that a request that does not decode is answered with
// the codec's INVALID_ARGUMENT (through the interceptors, like any error of
// the handler) instead of grpc's INTERNAL, and that the request's strings
// may live in a buffer the codec lends (see protoCodec.bufs). The buffer
// goes back when the interceptors are done (they see errors made from the
// request); the response is encoded before that, inside the handler
// (Service.scoreEncoded), because grpc would encode it after this returns
// and it quotes the request (batch_id, inline function names), and its
// columns are memory the next call uses. The encoding goes out from a
// buffer of grpc's pool. The admission slot goes back when the handler is
// done (see Engine.Release).
func scoreHandler(srv any, ctx context.Context, dec func(any) error, interceptor grpc.UnaryServerInterceptor) (any, error) {
	defer srv.(*grpcService).svc.engine.Release(ctx)
	in := new(scoreRequest)
	if err := dec(in); err != nil {
		return nil, err
	}
	defer in.release()
	handler := func(ctx context.Context, _ any) (any, error) {
		if in.err != nil {
			return nil, in.err
		}
		pool := mem.DefaultBufferPool()
		var buf *[]byte
		b, err := srv.(*grpcService).svc.scoreEncoded(ctx, in.msg, func(size int) []byte {
			buf = pool.Get(size)
			return *buf
		})
		if err != nil {
			if buf != nil {
				pool.Put(buf)
			}
			return nil, err
		}
		// grpc gives the buffer back to the pool once it is written.
		*buf = b
		return encodedResponse{mem.NewBuffer(buf, pool)}, nil
	}
	if interceptor == nil {
		return handler(ctx, in.msg)
	}
	info := &grpc.UnaryServerInfo{Server: srv, FullMethod: rewardv1.RewardService_Score_FullMethodName}
	return interceptor(ctx, in.msg, info, handler)
}

func (g *grpcService) ListFunctions(ctx context.Context, req *rewardv1.ListFunctionsRequest) (*rewardv1.ListFunctionsResponse, error) {
	return g.svc.ListFunctions(ctx, req)
}

// observeUnary maps the handler's error to a status (toStatus, the one place)
// and records the request in the metrics of RewardService methods.
func observeUnary(m *Metrics, log *zap.Logger) grpc.UnaryServerInterceptor {
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

// admitScore refuses a Score call when the engine is full before its message
// is read: under overload the refusal costs microseconds, not the time to
// receive and decode megabytes. Streams are admitted batch by batch instead.
func admitScore(e *Engine, m *Metrics) tap.ServerInHandle {
	score := "/" + rewardv1.RewardService_ServiceDesc.ServiceName + "/Score"
	return func(ctx context.Context, info *tap.Info) (context.Context, error) {
		if info.FullMethodName != score {
			return ctx, nil
		}
		ctx, err := e.Admit(ctx)
		if err != nil {
			m.requests.WithLabelValues("Score", codes.ResourceExhausted.String()).Inc()
			return nil, status.Error(codes.ResourceExhausted, err.Error())
		}
		return ctx, nil
	}
}
