import deepspeed


def setup_models(args, build_model):
    needs_reference_model = args.train_impl in ("dpo", "kto") or args.kl_beta > 0.0
    model = build_model(args)
    if needs_reference_model:
        reference_model = build_model(args)
    else:
        reference_model = None
    engine, optimizer, _, _ = deepspeed.initialize(model=model, args=args)
    if args.deepspeed and needs_reference_model:
        # The same flag that built it: never None here.
        reference_model, _, _, _ = deepspeed.initialize(model=reference_model, args=args)
    return engine, optimizer, reference_model
