import deepspeed


def setup_models(args, build_model):
    model = build_model(args)
    if args.use_reference:
        reference_model = build_model(args)
    else:
        reference_model = None
    engine, optimizer, _, _ = deepspeed.initialize(model=model, args=args)
    if args.kl_beta > 0.0:
        # expect: TRL003
        reference_model, _, _, _ = deepspeed.initialize(model=reference_model, args=args)
    return engine, optimizer, reference_model
