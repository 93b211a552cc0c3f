"""The layer every op stands on: the device, one object that holds its
queue, facts, kernels, pool and tile (``device.py``), tensors
(``tensor.py``), building and launching kernels (``program.py``) with their
arguments checked (``signature.py``), input validation (``validate.py``),
arithmetic on bare tensors that records no gradient (``tensor_ops.py``)
and the work of each kernel launch (``work.py``)."""
