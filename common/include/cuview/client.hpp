// The client library: open a run of a publisher (cuview::open), on this host or through a
// gateway, receive its frames (zero-copy locally), views and regions, steer it, detach.
//   run.hpp         Run, the one way in (open), Group (local), RemoteGroup (through gateways)
//   attachment.hpp  Attachment to one publisher or part: Client (local), RemoteClient; RemoteHost
//   frame.hpp       Frame, FrameGroup
//   assembly.hpp    Extent, Block, step matching and placing parts (pure)
#pragma once

#include "cuview/assembly.hpp"
#include "cuview/attachment.hpp"
#include "cuview/frame.hpp"
#include "cuview/run.hpp"
#include "cuview/view_sampler.hpp"
