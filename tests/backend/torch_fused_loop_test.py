#!/usr/bin/python3
"""scripts/torch_fused_loop.py, the plain-PyTorch reference of `fusim run --execution graph`:
its hooks must run the same math as eager, at the moments the autograd engine gives them.

On a small conv net (conv, batch norm, relu, linear: params with and without a gradient
accumulator reached through expand_as) and each optimizer and impl the script offers:
  - backward-fused: every parameter's hook fires once per backward, after its gradient is
    final: the gradient the hook sees equals the one a plain loss.backward() leaves in
    .grad (same weights, same batch), and hooks fire in the engine's order, the last
    layer's parameters first;
  - after K steps (forward-fused: and its flush), backward-fused and forward-fused weights
    equal eager's, the per-parameter optimizers of --eager-optimizers per-param too.
Exit 1 naming every mismatch.
"""
import importlib.util
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "..", "scripts", "torch_fused_loop.py")
spec = importlib.util.spec_from_file_location("torch_fused_loop", SCRIPT)
loop = importlib.util.module_from_spec(spec)
spec.loader.exec_module(loop)

STEPS = 3


def net():
    return torch.nn.Sequential(
        torch.nn.Conv2d(3, 4, 3, padding=1), torch.nn.BatchNorm2d(4), torch.nn.ReLU(),
        torch.nn.Flatten(), torch.nn.Linear(4 * 6 * 6, 5))


def weights(run):
    return [p.detach().clone() for p in run.model.parameters()]


def main():
    torch.set_num_threads(1)
    torch.manual_seed(3)
    inputs, target = torch.randn(2, 3, 6, 6), torch.randint(0, 5, (2,))
    failures = []
    for optimizer in ("sgd", "momentum", "adam", "adamw"):
        for impl in ("loop", "foreach"):
            what = f"{optimizer} {impl}"
            args = loop.parse_args(["x", "net", "--optimizer", optimizer, "--impl", impl])
            make = lambda name, a=args: loop.Ordering(torch, name, a, net, inputs, target)
            runs = {o: make(o) for o in loop.ORDERINGS}
            per_param = loop.Ordering(
                torch, "eager", loop.parse_args(["x", "net", "--optimizer", optimizer, "--impl",
                                                 impl, "--eager-optimizers", "per-param"]),
                net, inputs, target)

            # The hooks' order and gradients, against a plain backward on a copy.
            bf = runs["backward-fused"]
            ref = net()
            ref.load_state_dict(bf.model.state_dict())
            ref.train()
            torch.nn.CrossEntropyLoss()(ref(inputs), target).backward()
            expected = {id(p): q.grad.clone() for p, q in zip(bf.params, ref.parameters())}
            seen = []
            original = bf._step_param

            def spy(p):
                seen.append((id(p), p.grad.clone()))
                original(p)
            bf._step_param = spy
            bf.step()
            bf._step_param = original
            names = {id(p): n for n, p in bf.model.named_parameters()}
            order = [names[i] for i, _ in seen]
            if sorted(order) != sorted(names.values()):
                failures.append(f"{what}: hooks fired for {order}, expected each of "
                                f"{sorted(names.values())} once")
            # The engine runs the last layer's nodes first (highest sequence number).
            if order and not order[0].startswith("4."):
                failures.append(f"{what}: first hook on {order[0]}, expected the Linear (4.*)")
            if order and not order[-1].startswith("0."):
                failures.append(f"{what}: last hook on {order[-1]}, expected the Conv2d (0.*)")
            for i, g in seen:
                if not torch.equal(g, expected[i]):
                    failures.append(f"{what}: {names[i]}'s hook saw a gradient that is not "
                                    f"the final one")
            for run in list(runs.values()) + [per_param]:
                for _ in range(STEPS if run is not bf else STEPS - 1):
                    run.step()
                run.flush()
            eager = weights(runs["eager"])
            for name, run in list(runs.items()) + [("eager per-param", per_param)]:
                for (n, _), a, b in zip(run.model.named_parameters(), weights(run), eager):
                    if not torch.allclose(a, b, rtol=0, atol=1e-6):
                        failures.append(f"{what}: {name} {n} differs from eager's after "
                                        f"{STEPS} steps by {(a - b).abs().max().item():.3g}")
    for f in failures:
        print("FAIL", f)
    if not failures:
        print(f"torch_fused_loop: hooks in autograd's order on final gradients; "
              f"{STEPS} steps equal eager's for every optimizer and impl")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
