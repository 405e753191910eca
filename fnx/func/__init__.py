"""``fnx.func``: PyTorch's ``torch.func`` (function transforms), built on JAX's.

``vmap``, ``grad``, ``grad_and_value``, ``vjp``, ``jvp``, ``jacrev``, ``jacfwd`` and
``hessian`` do not re-implement batching or differentiation rules. A transformed function,
when called:

1. traces the user's function for the call's argument shapes (``_traced.Traced``: the
   ``fnx.compile`` tracer, functional and decomposed to prims; tensors it reads from
   outside become extra inputs) and lowers the graph with the JAX target's rules
   (``graph_program``) to a pure JAX function of the flattened tensor inputs;
2. wraps that function in JAX's own transform (``jax.vmap``, ``jax.value_and_grad``,
   ``jax.vjp``, ``jax.jvp``, ``jax.jacrev``, ``jax.jacfwd``);
3. runs it as one call of the operator ``fnx_func::call`` (``_program_op``), whose kernel
   runs the function ``jax.jit``-ed, and wraps the arrays as fnx tensors in the output's
   pytree structure (tuples, lists, dicts).

Nesting works because the transformed function is an *operator call*: inside another
transform's (or ``fnx.compile``'s) trace, ``grad(f)(x)`` traces ``f`` itself and is recorded
as one ``fnx_func::call`` node whose JAX lowering is the transformed JAX function, so the
outer ``jax.vmap``/``jax.grad`` composes with it (``vmap(grad(f))``, ``jacrev(jacrev(f))``,
a ``grad`` inside a vmapped function, tensors of the outer trace captured by the inner
function). The op's derivative is another ``fnx_func::call`` of the ``jax.vjp`` of its
function, so eager autograd (``.backward()``) also flows through transformed results.

Traces are cached (64, most recently used) per transform, function and call signature,
guarded as ``fnx.compile`` guards (the modules, globals and closure cells the function
reads), so ``vmap(grad(f))`` made anew on each step reuses its compiled program. Inputs
the function writes in place (batch norm's running stats) get their new values after the
call. A function whose
Python depends on tensor values (``.item()``, ``if x.sum() > 0``) cannot be traced: the
transform raises a RuntimeError naming itself. ``functional_call`` and
``stack_module_state`` (``_functional_call``) make a module a function of its state.

Differences from ``torch.func``: ``no_grad()`` inside the function does not stop the
transform's gradients (``detach()`` does); Python floats among the arguments are constants
of the trace (a new value retraces); tensors the function reaches through an object other
than a module or a dict/list it names directly are the ones it reached when traced.

>>> import fnx
>>> from fnx.func import vmap, grad
>>> vmap(grad(lambda x: (x ** 3).sum()))(fnx.tensor([[1., 2.], [3., 4.]]))
tensor([[ 3., 12.],
        [27., 48.]])
"""
from ._control_flow import cond, while_loop
from ._functional_call import functional_call, stack_module_state
from ._transforms import grad, grad_and_value, hessian, jacfwd, jacrev, jvp, vjp, vmap

__all__ = ["vmap", "grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd", "hessian",
           "functional_call", "stack_module_state", "cond", "while_loop"]
