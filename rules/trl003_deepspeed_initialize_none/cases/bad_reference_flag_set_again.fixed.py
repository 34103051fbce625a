import deepspeed


def setup_models(args, build_model):
    needs_reference_model = args.train_impl in ("dpo", "kto")
    model = build_model(args)
    if needs_reference_model:
        reference_model = build_model(args)
    else:
        reference_model = None
    engine, optimizer, _, _ = deepspeed.initialize(model=model, args=args)
    # The flag is read again after the reference model was (not) built: the two tests may disagree.
    needs_reference_model = needs_reference_model or args.kl_beta > 0.0
    if needs_reference_model:
        # expect: TRL003
        if reference_model is not None:
            reference_model, _, _, _ = deepspeed.initialize(model=reference_model, args=args)
    return engine, optimizer, reference_model
