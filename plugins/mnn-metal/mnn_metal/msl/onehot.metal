#include <metal_stdlib>
#include <simd/simd.h>

using namespace metal;

constant uint _25_tmp [[function_constant(0)]];
constant uint _25 = is_function_constant_defined(_25_tmp) ? _25_tmp : 1u;
constant uint _26_tmp [[function_constant(1)]];
constant uint _26 = is_function_constant_defined(_26_tmp) ? _26_tmp : 1u;
constant uint _27_tmp [[function_constant(2)]];
constant uint _27 = is_function_constant_defined(_27_tmp) ? _27_tmp : 1u;
constant uint3 gl_WorkGroupSize [[maybe_unused]] = uint3(_25, _26, _27);

struct _41
{
    uint _m0;
    uint _m1;
    uint _m2;
    uint _m3;
    uint _m4;
};

struct _104
{
    int _m0[1];
};

struct _142
{
    uint _m0[1];
};

struct _147
{
    uint _m0[1];
};

kernel void onehot(const device _104& _106 [[buffer(0)]], const device _147& _149 [[buffer(1)]], device _142& _144 [[buffer(2)]], constant _41& _43 [[buffer(30)]], uint3 gl_WorkGroupID [[threadgroup_position_in_grid]], uint3 gl_NumWorkGroups [[threadgroups_per_grid]], uint3 gl_LocalInvocationID [[thread_position_in_threadgroup]])
{
    do
    {
        uint _187 = (((gl_WorkGroupID.y * gl_NumWorkGroups.x) + gl_WorkGroupID.x) * gl_WorkGroupSize.x) + gl_LocalInvocationID.x;
        if (_187 >= _43._m0)
        {
            break;
        }
        uint _59 = _187 / _43._m3;
        uint _75 = _59 / _43._m1;
        uint _93 = ((_75 / _43._m2) * _43._m1) + (_59 % _43._m1);
        int _189;
        if (_43._m4 == 1u)
        {
            _189 = _106._m0[2u * _93];
        }
        else
        {
            int _188;
            if (_43._m4 == 2u)
            {
                _188 = int(as_type<float>(_106._m0[_93]));
            }
            else
            {
                _188 = _106._m0[_93];
            }
            _189 = _188;
        }
        int _190;
        if (_189 < 0)
        {
            _190 = _189 + int(_43._m2);
        }
        else
        {
            _190 = _189;
        }
        _144._m0[_187] = _149._m0[((_190 == int(_75 % _43._m2)) ? _43._m3 : 0u) + (_187 % _43._m3)];
        break;
    } while(false);
}

